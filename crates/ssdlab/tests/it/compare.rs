//! `ssdlab compare` end to end: identical reports differ by nothing, a change of workload
//! shows in the metrics and in the settings, JSON output, and foreign files are refused by
//! name.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{fails, ok};

/// Runs a short fio-like job on pipessd and returns its report file.
fn report(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut args = vec![
        "run",
        "--precondition",
        "none",
        "pipessd",
        "--rw",
        "randread",
        "--number-ios",
        "300",
        "--numjobs",
        "1",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--json", path.to_str().unwrap()]);
    ok(&args);
    path
}

#[test]
fn identical_reports_differ_by_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (report(dir.path(), "a.json", &[]), report(dir.path(), "b.json", &[]));
    let out = ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(out.contains("(baseline)"), "{out}");
    let iops = out.lines().find(|l| l.starts_with("IOPS")).expect(&out);
    assert!(iops.ends_with("(+0.0%)"), "{iops}");
    let table = &out[out.find("metric").expect(&out)..out.find("config differences").expect(&out)];
    for line in table.lines().filter(|l| l.contains('(')) {
        let last = line.rsplit("  ").next().unwrap();
        assert!(last.ends_with("(+0.0%)") || last.ends_with("(+0.0 pp)"), "only zero changes: {line}");
    }
    assert!(out.contains("config differences: none"), "{out}");
}

#[test]
fn a_changed_workload_shows_in_metrics_settings_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let a = report(dir.path(), "a.json", &["--iodepth", "1"]);
    let b = report(dir.path(), "b.json", &["--iodepth", "16", "--seed", "9"]);
    let json = dir.path().join("cmp.json");
    let out = ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    let diffs = &out[out.find("config differences").expect(&out)..];
    assert!(diffs.lines().any(|l| l.starts_with("seed ") && l.ends_with('9')), "{diffs}");
    assert!(diffs.lines().any(|l| l.starts_with("workload[0].iodepth")), "{diffs}");
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let iops = c["metrics"].as_array().unwrap().iter().find(|m| m["name"] == "IOPS").unwrap();
    let (base, other) = (iops["values"][0].as_f64().unwrap(), iops["values"][1].as_f64().unwrap());
    let change = iops["changes"][1].as_f64().unwrap();
    assert!((change - (other - base) / base * 100.0).abs() < 1e-6, "{iops}");
    assert!(other > base, "QD16 completes more commands per second than QD1: {iops}");
    // `--json -` prints the JSON instead of the table.
    let stdout = ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json", "-"]);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
}

#[test]
fn foreign_and_missing_files_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let a = report(dir.path(), "a.json", &[]);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    v["schema"] = "ssdlab.report/2".into();
    let future = dir.path().join("future.json");
    std::fs::write(&future, v.to_string()).unwrap();
    let e = fails(&["compare", a.to_str().unwrap(), future.to_str().unwrap()]);
    assert!(
        e.contains("future.json") && e.contains("ssdlab.report/2") && e.contains("ssdlab.report/1"),
        "{e}"
    );
    let missing = dir.path().join("missing.json");
    let e = fails(&["compare", missing.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(e.contains("missing.json"), "{e}");
    // One file is not a comparison.
    let out = crate::ssdlab(&["compare", a.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "clap usage error");
}
