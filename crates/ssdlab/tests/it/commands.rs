//! The commands work on a fresh machine and their outputs are well formed and reproducible.

use crate::{SMALL, device_file, ok};

#[test]
fn presets_are_listed_and_shown_with_their_comments() {
    let list = ok(&["presets"]);
    for name in ["softssd", "pipessd", "hostftl-array"] {
        assert!(list.contains(name), "{list}");
        assert!(ok(&["presets", name]).contains("PRESETS.md"), "preset {name} cites PRESETS.md");
    }
}

#[test]
fn resolved_config_runs_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = ok(&["config", "pipessd"]);
    assert!(text.contains("t_prog = \"400us\""), "{text}");
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, text).unwrap();
    let out = ok(&["phys", path.to_str().unwrap(), "--count", "200"]);
    assert!(out.starts_with("device pipessd"), "{out}");
}

#[test]
fn same_seed_same_json_report() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str, name: &str| {
        let path = dir.path().join(name);
        ok(&[
            "phys",
            "pipessd",
            "--op",
            "mixed",
            "--pattern",
            "random",
            "--count",
            "3000",
            "--seed",
            seed,
            "--json",
            path.to_str().unwrap(),
        ]);
        std::fs::read_to_string(path).unwrap()
    };
    let (a, b, c) = (run("7", "a.json"), run("7", "b.json"), run("8", "c.json"));
    assert_eq!(a, b);
    assert_ne!(a, c);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["read"]["count"].as_u64().unwrap() + v["program"]["count"].as_u64().unwrap(), 3000);
}

#[test]
fn image_store_keeps_data_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("dev.img");
    let img = img.to_str().unwrap();
    let dev = dir.path().join("small.toml");
    let small = "name = 'small'\n[geometry]\nchannels = 2\nways = 2\nblocks = 16\npages = 32\npage_size = '16KiB'\n[ftl]\nop = 0.5\ncache = { capacity = '1MiB' }\n";
    std::fs::write(&dev, small).unwrap();
    let dev = dev.to_str().unwrap();
    ok(&["phys", dev, "--op", "program", "--count", "64", "--store", "image", "--image", img]);
    assert!(std::path::Path::new(img).exists());
    // The reopened image remembers what was programmed: programming again is refused cleanly.
    let e =
        crate::fails(&["phys", dev, "--op", "program", "--count", "64", "--store", "image", "--image", img]);
    assert!(e.contains("block 0 already holds data and this workload programs it"), "{e}");
    let out = ok(&["phys", dev, "--op", "read", "--count", "64", "--store", "image", "--image", img]);
    assert!(out.contains("read"), "{out}");
}

/// A small device for command-line runs.
#[test]
fn run_shows_the_breakdown_and_saves_series_and_per_request_lines() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = device_file(dir.path(), SMALL);
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("req.csv"));
    #[rustfmt::skip]
    let out = ok(&[
        "run", cfg.to_str().unwrap(), "--precondition", "steady-state", "--rw", "randrw", "--number-ios", "3000",
        "--iodepth", "8", "--numjobs", "2", "--breakdown", "--interval", "1ms",
        "--json", json.to_str().unwrap(), "--per-request", csv.to_str().unwrap(),
    ]);
    assert!(out.contains("started from: steady-state:2 (fast path)"), "{out}");
    assert!(out.contains("worker_wait") && out.contains("p99 us"), "{out}");
    // The per-request file: a header and one line per command, latency = the sum of phases.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..4], ["id", "clone", "qid", "op"]);
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split(',').enumerate().filter(|(i, _)| *i != 3).map(|(_, v)| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 6000);
    for r in &rows {
        let latency = r[7];
        let phases: u64 = r[9..].iter().sum();
        assert_eq!(latency, phases, "phases add up to the latency: {r:?}");
    }
    // The time series covers the run and counts every command.
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ts = &report["timeseries"];
    let t: Vec<f64> = serde_json::from_value(ts["t_ms"].clone()).unwrap();
    let iops: Vec<f64> = serde_json::from_value(ts["iops"].clone()).unwrap();
    assert!(t.len() > 10 && t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    let mut prev = 0.0;
    let completed: f64 = t
        .iter()
        .zip(&iops)
        .map(|(&end, &rate)| {
            let n = rate * (end - prev) / 1e3;
            prev = end;
            n
        })
        .sum();
    assert!((completed - 6000.0).abs() < 1.0, "{completed}");
    assert!(ts["free_blocks"].as_array().unwrap().iter().all(|v| v.as_u64().is_some()));
    assert!(report["wear"]["histogram"].as_array().unwrap().len() > 1);
    assert_eq!(report["ops"]["read"]["latency_cdf_ns"].as_array().unwrap().len(), 106);
}

/// Issue 14: `ssdlab run` on its defaults read data that was never written (most requests
/// completed without a flash operation, WAF 0.00). A run now ages the device to GC steady state
/// first unless told otherwise, and says so on its first line; `--precondition none` starts
/// from a fresh device as before.
#[test]
fn run_ages_the_device_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = device_file(dir.path(), SMALL);
    let cfg = cfg.to_str().unwrap();
    let aged = crate::ssdlab(&["run", cfg, "--rw", "randrw", "--number-ios", "3000", "--numjobs", "1"]);
    assert!(aged.status.success());
    let (err, out) = (String::from_utf8_lossy(&aged.stderr), String::from_utf8_lossy(&aged.stdout));
    assert!(err.lines().next().unwrap().starts_with("ageing small to GC steady state first"), "{err}");
    assert!(out.contains("started from: steady-state:2 (fast path)"), "{out}");
    assert!(!out.contains("WAF 0.00"), "writes reach flash: {out}");
    let fresh = ok(&["run", cfg, "--precondition", "none", "--rw", "randread", "--number-ios", "300"]);
    assert!(!fresh.contains("started from"), "a fresh device: {fresh}");
    let bad = crate::ssdlab(&["run", cfg, "--precondition", "old"]);
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && e.contains("expected none, seq-fill"), "{e}");
}

/// Issue 27: `age` took neither `--blocks` nor `--set` where `run` and `replay` do. It takes
/// the same flags now, and the saved device is the shaped one: a run from the state reports
/// its geometry and settings, and its help says what they do.
#[test]
fn age_shapes_the_device_as_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = device_file(dir.path(), SMALL); // 64 blocks per plane, op 0.15
    let state = dir.path().join("s.state");
    let (s, c) = (state.to_str().unwrap(), cfg.to_str().unwrap());
    ok(&["age", c, "--blocks", "48", "--set", "ftl.op=0.25", "--precondition", "seq-fill", "--out", s]);
    let json = dir.path().join("r.json");
    ok(&["run", "--state", s, "--number-ios", "200", "--size", "1m", "--json", json.to_str().unwrap()]);
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["device"]["geometry"]["blocks"], 48);
    assert_eq!(r["device"]["ftl"]["op"], 0.25);
    let help = ok(&["age", "--help"]);
    assert!(help.contains("--blocks <BLOCKS>") && help.contains("--set <PATH=VALUE>"), "{help}");
}
