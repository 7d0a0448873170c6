//! `ssdlab calibrate`: the closed loop (a served device with hidden timing, measured over NBD
//! and fitted back), refits of a saved measurement, and bad input.

use std::path::Path;

use serde_json::{Value, json};

use crate::serve::{Server, have};
use crate::{fails, ok};

/// Held by the tests here that simulate, so that none runs while the closed loop measures (a
/// busy core delays the served device's replies, which the measurement then includes).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A read-only plan of four 3 s points in 32 MiB (the closed loop's; docs/calibrate.md says
/// why writes are left out of it). At dilation 50 a point covers runtime / 50 of device time:
/// 1 s points measured 21 reads of 1 MiB, where one read more or less is 5% of the IOPS the
/// test holds to 5% (it failed CI once at +5.06%); 3 s points measure about 63.
const READ_PLAN: &str = "region = '32MiB'\nruntime = 3.0\nramp = 0.5\n\
    [[point]]\nrw = 'randread'\nbs = '4KiB'\niodepth = 1\n\
    [[point]]\nrw = 'randread'\nbs = '4KiB'\niodepth = 16\n\
    [[point]]\nrw = 'randread'\nbs = '64KiB'\niodepth = 1\n\
    [[point]]\nrw = 'read'\nbs = '1MiB'\niodepth = 4\n";

/// The closed loop: `ssdlab serve` runs softssd with a read time 30% longer and a channel 25%
/// slower than the preset's, 50 times slower than real time; calibrate measures it over NBD
/// and fits both back from the preset's values. Each must come back within 10%, and the fitted
/// IOPS and mean latency within 5% of the served device's at every point.
///
/// Timing-sensitive (the served device's replies wait for a core when others are busy): not in
/// the parallel suite; `.ci/run` runs it by itself (`-- --ignored --exact
/// calibrate::calibrate_recovers_hidden_timing_of_a_served_device`).
#[test]
#[ignore = "timing-sensitive: .ci/run runs it alone"]
fn calibrate_recovers_hidden_timing_of_a_served_device() {
    if !(have("fio") && have("nbdinfo")) {
        return;
    }
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, READ_PLAN).unwrap();
    let args = [
        "softssd",
        "--quiet",
        "--dilation",
        "50",
        "--set",
        "ftl.cache.capacity=1MiB",
        "--set",
        "timing.t_read=135.2us",
        "--set",
        "timing.channel_mts=300",
    ];
    let server = Server::launch(dir.path(), &dir.path().join("nand.img"), &args, std::process::Stdio::null());
    let uri = format!("nbd+unix:///ssdlab?socket={}", server.sock.display());
    let out = dir.path().join("back.toml");
    let text = ok(&[
        "calibrate",
        &uri,
        "--from",
        "softssd",
        "--set",
        "ftl.cache.capacity=1MiB",
        "--plan",
        plan.to_str().unwrap(),
        "--dilation",
        "50",
        "--fit",
        "timing.t_read,timing.channel_mts",
        "--metrics",
        "iops,mean",
        "--sim-ios",
        "500",
        "--budget",
        "1m",
        "--out",
        out.to_str().unwrap(),
    ]);
    server.stop();
    let r = read_json(&dir.path().join("back.report.json"));
    eprintln!(
        "{text}\nclosed loop: fit {:.1} s wall, {} simulations",
        r["fit_seconds"].as_f64().unwrap(),
        r["simulations"]
    );
    for (p, truth) in r["parameters"].as_array().unwrap().iter().zip([135_200.0, 300.0]) {
        let got = p["after"].as_f64().unwrap();
        assert!((got / truth - 1.0).abs() < 0.10, "{}: {got} against {truth}\n{text}", p["path"]);
    }
    for p in r["points"].as_array().unwrap() {
        for e in &p["error"].as_array().unwrap()[..2] {
            assert!(e.as_f64().unwrap().abs() < 0.05, "{}: {}\n{text}", p["point"], p["error"]);
        }
    }
    // The fitted file is a device `ssdlab run` takes.
    let cfg = std::fs::read_to_string(&out).unwrap();
    assert!(cfg.starts_with("# ssdlab device configuration fitted by `ssdlab calibrate` from `softssd`"));
    ok(&["run", out.to_str().unwrap(), "--precondition", "none", "--rw", "randread", "--number-ios", "100"]);
}

/// A measurement as a report's `measurement`: softssd's own predictions with the read time
/// 20% longer, written out (so the refit needs no fio).
fn saved_measurement(dir: &Path) -> std::path::PathBuf {
    let points = json!([
        { "iops": 3900.0, "mean_us": 256.0, "p99_us": 262.0, "ios": 3900 },
        { "iops": 1500.0, "mean_us": 660.0, "p99_us": 700.0, "ios": 1500 },
    ]);
    let m = json!({ "measurement": {
        "target": "saved", "capacity": 1u64 << 30, "dilation": 1.0, "seconds": 3.0,
        "plan": { "region": "16MiB", "runtime": 1.0, "ramp": 0.0, "point": [
            { "rw": "randread", "bs": "4KiB", "iodepth": 1 },
            { "rw": "read", "bs": "1MiB", "iodepth": 1 },
        ]},
        "points": points,
    }});
    let path = dir.join("saved.json");
    std::fs::write(&path, m.to_string()).unwrap();
    path
}

/// A refit of a saved measurement is deterministic: the same report (but its wall time) and
/// the same fitted file, twice.
#[test]
fn calibrate_refits_a_saved_measurement_deterministically() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let saved = saved_measurement(dir.path());
    let run = |name: &str| {
        let out = dir.path().join(format!("{name}.toml"));
        ok(&[
            "calibrate",
            "saved",
            "--measured",
            saved.to_str().unwrap(),
            "--set",
            "ftl.cache.capacity=1MiB",
            "--fit",
            "timing.t_read,timing.channel_mts",
            "--sim-ios",
            "200",
            "--max-iters",
            "8",
            "--out",
            out.to_str().unwrap(),
        ]);
        let mut r = read_json(&dir.path().join(format!("{name}.report.json")));
        r.as_object_mut().unwrap().remove("fit_seconds");
        (r, std::fs::read_to_string(out).unwrap())
    };
    let (a, ta) = run("a");
    let (b, tb) = run("b");
    assert_eq!(a, b);
    assert_eq!(ta, tb);
    let before = a["rms_error_before"].as_f64().unwrap();
    let after = a["rms_error_after"].as_f64().unwrap();
    assert!(after < before, "{before} -> {after}");
    assert_eq!(a["points"].as_array().unwrap().len(), 2);
    assert_eq!(a["simulations"].as_u64().unwrap(), 2 * a["evaluations"].as_u64().unwrap());
    assert!(a["cost_after"].as_f64().unwrap() < a["cost_before"].as_f64().unwrap(), "{a}");
    // The curves, beside the report.
    for chart in ["a.iops.png", "a.mean.png"] {
        let len = std::fs::metadata(dir.path().join(chart)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 10_000, "{chart}: {len} bytes");
    }
}

#[test]
fn calibrate_bad_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.toml");
    let o = out.to_str().unwrap();
    let missing = dir.path().join("missing.img");
    let e = fails(&["calibrate", missing.to_str().unwrap(), "--out", o]);
    assert!(e.contains("missing.img: does not exist"), "{e}");
    let e = fails(&["calibrate", missing.to_str().unwrap(), "--quick", "--budget", "5s", "--out", o]);
    assert!(e.contains("the plan needs at least 12 s"), "{e}");
    let e = fails(&["calibrate", "x", "--fit", "nand.read_us", "--out", o]);
    assert!(e.contains("--fit: nand.read_us is not a parameter of softssd"), "{e}");
    let fs = dir.path().join("fs.img");
    let mut bytes = vec![0u8; 64 << 20];
    bytes[0x438] = 0x53;
    bytes[0x439] = 0xEF;
    std::fs::write(&fs, &bytes).unwrap();
    let e = fails(&["calibrate", fs.to_str().unwrap(), "--quick", "--out", o]);
    assert!(e.contains("holds a ext2/3/4 (calibration writes over it): refusing"), "{e}");
    assert_eq!(std::fs::read(&fs).unwrap(), bytes, "nothing written");
    assert!(!out.exists());
}
