//! Flows (issue 30): every job of a run is a flow with its own figures in the report, the text
//! summary and `ssdlab compare`, and the flows add up to the device's totals.

use serde_json::Value;

use crate::{device_file, ok};

const JOBS: &str = "[global]
bs=4k
number_ios=3000

[reader]
rw=randread
iodepth=8

[writers]
rw=randwrite
bs=16k
iodepth=4
numjobs=2
";

/// Runs the two jobs above on the small device and returns the text summary and the report.
fn run(dir: &std::path::Path, seed: &str) -> (String, Value) {
    let dev = device_file(dir, crate::SMALL);
    let jobs = dir.join("two.fio");
    std::fs::write(&jobs, JOBS).unwrap();
    let json = dir.join(format!("r{seed}.json"));
    let args = ["run", dev.to_str().unwrap(), "--job-file", jobs.to_str().unwrap(), "--seed", seed];
    let text = ok(&[&args[..], &["--json", json.to_str().unwrap()]].concat());
    (text, serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap())
}

#[test]
fn each_job_is_a_flow_and_the_flows_add_up_to_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let (text, r) = run(dir.path(), "5");
    let flows = r["flows"].as_array().expect("flows");
    assert_eq!(flows.len(), 2, "one flow per job: {flows:?}");
    assert_eq!(flows[0]["name"], "reader");
    assert_eq!(flows[1]["name"], "writers");
    // The reader's one clone has a queue; the writers' two clones one each, not the reader's.
    let queues =
        |f: &Value| f["queues"].as_array().unwrap().iter().map(|q| q.as_u64().unwrap()).collect::<Vec<_>>();
    let (rq, wq) = (queues(&flows[0]), queues(&flows[1]));
    assert_eq!(rq.len(), 1, "{rq:?}");
    assert_eq!(wq.len(), 2, "{wq:?}");
    assert!(!wq.contains(&rq[0]), "{rq:?} {wq:?}");
    assert!(flows[0]["ops"].get("write").is_none(), "the reader wrote nothing");
    assert_eq!(flows[0]["ops"]["read"]["count"], 3000);
    assert_eq!(flows[1]["ops"]["write"]["count"], 6000, "3000 per clone");
    for op in ["read", "write"] {
        for field in ["count", "bytes", "errors"] {
            let device = r["ops"][op][field].as_u64().unwrap();
            let sum: u64 = flows.iter().map(|f| f["ops"][op][field].as_u64().unwrap_or(0)).sum();
            assert_eq!(sum, device, "{op} {field}: flows {sum}, device {device}");
        }
    }
    let total: u64 = flows.iter().map(|f| f["total"]["count"].as_u64().unwrap()).sum();
    assert_eq!(total, r["total"]["count"].as_u64().unwrap());
    // A flow's rates are over its own window, which ends at its last completion.
    for f in flows {
        assert!(f["window_ns"].as_u64().unwrap() <= r["window_ns"].as_u64().unwrap());
        let c = f["total"]["count"].as_f64().unwrap();
        let iops = c / (f["window_ns"].as_f64().unwrap() / 1e9);
        assert!((f["total"]["iops"].as_f64().unwrap() / iops - 1.0).abs() < 1e-6, "{f}");
    }
    // The text summary has a flow table: a line per flow and direction.
    assert!(text.contains("flow (queues)"), "{text}");
    let line =
        |name: &str, op: &str| text.lines().any(|l| l.starts_with(name) && l.contains(&format!(" {op} ")));
    assert!(line("reader (", "read") && line("writers (", "write"), "{text}");
    assert!(!line("reader (", "write"), "{text}");
}

#[test]
fn flows_are_deterministic_and_compared_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (_, a) = run(dir.path(), "9");
    let (_, b) = run(dir.path(), "9");
    assert_eq!(a["flows"], b["flows"], "same seed, same flows");
    let (pa, pb) = (dir.path().join("r9.json"), dir.path().join("r9b.json"));
    std::fs::write(&pb, serde_json::to_string(&b).unwrap()).unwrap();
    let out = ok(&["compare", pa.to_str().unwrap(), pb.to_str().unwrap()]);
    for row in ["flow reader read IOPS", "flow writers write latency p99"] {
        let l = out.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("{row}: {out}"));
        assert!(l.ends_with("(+0.0%)"), "{l}");
    }
}
