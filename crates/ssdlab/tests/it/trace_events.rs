//! `--trace-events` writes a valid Trace Event Format file (what Chrome's trace viewer and
//! Perfetto load): metadata names every track, complete slices nest on each track, every flow
//! starts once, steps forward in time and finishes once, each flow event lies inside a slice of
//! its track, and the trace follows no more requests than asked.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::{SMALL, device_file, ok};

fn num(e: &Value, k: &str) -> f64 {
    e[k].as_f64().unwrap_or_else(|| panic!("{k} is not a number in {e}"))
}

/// Checks the format rules and returns (slices per category, flows).
fn validate(doc: &Value) -> (BTreeMap<String, usize>, usize) {
    let events = doc["traceEvents"].as_array().expect("traceEvents is an array");
    let mut named = BTreeSet::new();
    let mut slices: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    let mut cats = BTreeMap::new();
    let mut flows: BTreeMap<u64, Vec<(String, f64, u64, u64)>> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().expect("ph");
        let (pid, tid) = (e["pid"].as_u64().expect("pid"), e["tid"].as_u64().expect("tid"));
        assert!(e["name"].is_string(), "{e}");
        match ph {
            "M" => {
                assert!(e["args"]["name"].is_string() || e["args"]["sort_index"].is_u64(), "{e}");
                if e["name"] == "thread_name" {
                    named.insert((pid, tid));
                }
            }
            "X" => {
                let (ts, dur) = (num(e, "ts"), num(e, "dur"));
                assert!(ts >= 0.0 && dur >= 0.0, "{e}");
                slices.entry((pid, tid)).or_default().push((ts, ts + dur));
                *cats.entry(e["cat"].as_str().expect("cat").to_string()).or_insert(0) += 1;
            }
            "s" | "t" | "f" => {
                assert_eq!(e["cat"], "request", "{e}");
                let id = e["id"].as_u64().expect("flow id");
                flows.entry(id).or_default().push((ph.to_string(), num(e, "ts"), pid, tid));
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    for (track, v) in &mut slices {
        assert!(named.contains(track), "track {track:?} has no thread_name");
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut open: Vec<f64> = Vec::new();
        for &(s, e) in v.iter() {
            while open.last().is_some_and(|&end| end <= s + 1e-6) {
                open.pop();
            }
            if let Some(&end) = open.last() {
                assert!(e <= end + 1e-6, "track {track:?}: slice {s}..{e} overlaps one ending at {end}");
            }
            open.push(e);
        }
    }
    let inside = |pid, tid, ts: f64| {
        slices.get(&(pid, tid)).is_some_and(|v| v.iter().any(|&(s, e)| s <= ts + 1e-6 && ts <= e + 1e-6))
    };
    for (id, f) in &flows {
        let phases: Vec<&str> = f.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(phases.first(), Some(&"s"), "flow {id}: {phases:?}");
        assert_eq!(phases.last(), Some(&"f"), "flow {id}: {phases:?}");
        assert_eq!(phases.iter().filter(|p| **p == "s" || **p == "f").count(), 2, "flow {id}: {phases:?}");
        assert!(f.windows(2).all(|w| w[0].1 <= w[1].1), "flow {id} goes back in time: {f:?}");
        for (ph, ts, pid, tid) in f {
            assert!(inside(*pid, *tid, *ts), "flow {id} {ph} at {ts} is in no slice of ({pid}, {tid})");
        }
    }
    (cats, flows.len())
}

#[test]
fn trace_events_load_as_a_chrome_trace() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = device_file(dir.path(), SMALL);
    let path = dir.path().join("trace.json");
    #[rustfmt::skip]
    ok(&[
        "run", cfg.to_str().unwrap(), "--precondition", "steady-state", "--rw", "randrw", "--number-ios", "2000",
        "--trace-events", path.to_str().unwrap(), "--trace-requests", "150",
    ]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (cats, flows) = validate(&doc);
    for cat in ["host", "core", "channel", "die"] {
        assert!(cats.get(cat).copied().unwrap_or(0) > 0, "no {cat} slices: {cats:?}");
    }
    assert_eq!(cats["host"], 150, "one host slice per followed request");
    assert_eq!(flows, 150);
    assert_eq!(doc["otherData"]["requests"], 150);

    // A time window: nothing outside it but the late spans of requests it followed.
    #[rustfmt::skip]
    ok(&[
        "run", "--precondition", "none", cfg.to_str().unwrap(), "--rw", "randwrite", "--number-ios", "2000",
        "--trace-events", path.to_str().unwrap(), "--trace-from", "2ms", "--trace-until", "3ms",
        "--trace-requests", "100000",
    ]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (cats, _) = validate(&doc);
    let hosts: Vec<f64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "host")
        .map(|e| num(e, "ts"))
        .collect();
    // The window counts from the start of the run, a few microseconds after t = 0 (queue setup).
    assert!(!hosts.is_empty() && hosts.iter().all(|&t| (2000.0..3050.0).contains(&t)), "{cats:?} {hosts:?}");
}
