//! `ssdlab pts`: the SNIA PTS IOPS test to steady state on a small simulated device, the
//! write-saturation test's determinism, and the live executor against `ssdlab serve` through
//! fio's nbd engine.

use std::path::Path;

use serde_json::Value;

use crate::serve::{Server, have};
use crate::{SMALL, device_file, ok};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Total IOPS of the table cell at `read_pct` and `bs`.
fn cell(r: &Value, read_pct: u64, bs: u64) -> f64 {
    let cells = r["iops"]["table"].as_array().unwrap();
    let c = cells.iter().find(|c| c["read_pct"] == read_pct && c["bs"] == bs).expect("cell");
    f(&c["iops"])
}

#[test]
fn the_iops_test_reaches_steady_state_on_a_small_device() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), SMALL);
    let out = dir.path().join("out");
    let args = ["--test", "iops", "--point-time", "200ms", "--threads", "1", "--iodepth", "8", "--out"];
    let mut all = vec!["pts", dev.to_str().unwrap()];
    all.extend_from_slice(&args);
    all.push(out.to_str().unwrap());
    let text = ok(&all);
    let r = read_json(&out.join("pts.json"));
    let i = &r["iops"];
    assert_eq!(i["steady_state"], true, "{text}");
    let rounds = i["rounds"].as_array().unwrap();
    let w = &i["window"];
    let last = w["last_round"].as_u64().unwrap() as usize;
    assert!(rounds.len() == last && (5..=25).contains(&last), "{text}");
    assert!(rounds.iter().all(|r| r["points"].as_array().unwrap().len() == 56));
    // The criteria, recomputed from the rounds' tracking values.
    let y: Vec<f64> = rounds[last - 5..].iter().map(|r| f(&r["tracking_iops"])).collect();
    let avg = y.iter().sum::<f64>() / 5.0;
    let (lo, hi) = y.iter().fold((f64::MAX, 0f64), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(hi - lo <= 0.2 * avg, "{y:?}");
    assert!((f(&w["average"]) - avg).abs() < 1e-6 * avg);
    assert!(f(&w["slope_excursion"]) <= 0.1 * avg);
    // Sane numbers: small blocks beat large ones in IOPS, reads beat writes.
    assert!(cell(&r, 100, 512) > 4.0 * cell(&r, 100, 1 << 20), "{text}");
    assert!(cell(&r, 100, 4096) > cell(&r, 0, 4096), "{text}");
    assert_eq!(i["table"].as_array().unwrap().len(), 56);
    assert!(f(&i["preconditioning"]["bytes_written"]) >= 2.0 * f(&r["capacity_bytes"]));
    assert!(r["departures"][0].as_str().unwrap().contains("0.2 s"), "{}", r["departures"]);
    assert!(text.contains("steady state reached: window rounds"), "{text}");
    for name in ["pts-iops-convergence", "pts-iops-window", "pts-iops-table"] {
        for ext in ["png", "svg"] {
            assert!(out.join(format!("{name}.{ext}")).exists(), "{name}.{ext}");
        }
    }
}

#[test]
fn wsat_writes_the_capacity_multiple_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), SMALL);
    let run = |name: &str| {
        let json = dir.path().join(name);
        ok(&[
            "pts",
            dev.to_str().unwrap(),
            "--test",
            "wsat",
            "--point-time",
            "50ms",
            "--wsat-capacity-multiple",
            "1.5",
            "--json",
            json.to_str().unwrap(),
        ]);
        let mut r = read_json(&json);
        r.as_object_mut().unwrap().remove("wall_seconds").expect("wall_seconds");
        r
    };
    let (a, b) = (run("a.json"), run("b.json"));
    assert_eq!(a, b, "same seed, different results");
    let w = &a["wsat"];
    let iv = w["intervals"].as_array().unwrap();
    let cap = f(&a["capacity_bytes"]);
    assert_eq!(w["stopped_by"], "capacity");
    assert!(f(&iv.last().unwrap()["bytes_written"]) >= 1.5 * cap);
    assert!(iv.windows(2).all(|p| f(&p[1]["bytes_written"]) > f(&p[0]["bytes_written"])));
    assert!(iv.windows(2).all(|p| f(&p[1]["time_s"]) > f(&p[0]["time_s"])));
    // The write cliff: a fresh device writes faster than a saturated one.
    assert!(f(&w["first_iops"]) > f(&w["final_iops"]), "{w}");
}

/// The live executor: fio's nbd engine against `ssdlab serve` on a tiny device, one round.
#[test]
fn the_live_executor_measures_ssdlab_serve_through_fio() {
    if !(have("fio") && have("nbdinfo")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &dir.path().join("nand.img"), &[]);
    let uri = format!("nbd+unix:///ssdlab?socket={}", server.sock.display());
    let json = dir.path().join("live.json");
    let text = ok(&[
        "pts",
        "--target",
        &uri,
        "--point-time",
        "100ms",
        "--max-rounds",
        "1",
        "--wsat-capacity-multiple",
        "0.25",
        "--json",
        json.to_str().unwrap(),
    ]);
    let r = read_json(&json);
    assert!(r["iops"]["purge"].as_str().unwrap().contains("TRIM"), "{text}");
    assert!(r["target"].as_str().unwrap().contains("live, fio"));
    let points = r["iops"]["rounds"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 56);
    for p in points {
        let m = &p["measured"];
        assert!(f(&m["read_iops"]) + f(&m["write_iops"]) > 0.0, "{p}");
    }
    assert_eq!(r["iops"]["steady_state"], false, "one round cannot be steady");
    assert!(text.contains("steady state NOT reached"), "{text}");
    assert!(cell(&r, 100, 512) > cell(&r, 100, 1 << 20), "{text}");
    let w = &r["wsat"];
    let last = w["intervals"].as_array().unwrap().last().unwrap().clone();
    assert!(f(&last["bytes_written"]) >= 0.25 * f(&r["capacity_bytes"]), "{w}");
    server.stop();
}
