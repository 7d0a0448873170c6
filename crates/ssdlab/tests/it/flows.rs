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

/// `--alone` runs each job by itself on the same starting state with the stream it had in the
/// shared run: the reader's alone latency is exactly that of a run of the reader alone.
#[test]
fn alone_gives_each_flow_its_slowdown_and_the_run_its_fairness() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let (two, one) = (dir.path().join("two.fio"), dir.path().join("one.fio"));
    std::fs::write(&two, JOBS).unwrap();
    std::fs::write(&one, &JOBS[..JOBS.find("[writers]").unwrap()]).unwrap();
    let (shared, solo) = (dir.path().join("shared.json"), dir.path().join("solo.json"));
    let dev = dev.to_str().unwrap();
    let text =
        ok(&["run", dev, "--job-file", two.to_str().unwrap(), "--alone", "--json", shared.to_str().unwrap()]);
    ok(&["run", dev, "--job-file", one.to_str().unwrap(), "--json", solo.to_str().unwrap()]);
    let read = |p: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let (r, s) = (read(&shared), read(&solo));
    let flows = r["flows"].as_array().unwrap();
    let alone = flows[0]["alone_latency_mean_ns"].as_f64().expect("the reader ran alone");
    let by_itself = s["ops"]["read"]["latency_ns"]["mean"].as_f64().unwrap();
    assert_eq!(alone, by_itself, "the same stream on the same starting state");
    let slowdowns: Vec<f64> = flows.iter().map(|f| f["slowdown"].as_f64().expect("slowdown")).collect();
    for (f, sd) in flows.iter().zip(&slowdowns) {
        let shared_mean = report_mean(f);
        let expect = shared_mean / f["alone_latency_mean_ns"].as_f64().unwrap();
        assert!((sd / expect - 1.0).abs() < 1e-9, "{f}");
    }
    assert!(slowdowns[0] > 1.0, "writers slow the reader down: {slowdowns:?}");
    let fairness = r["fairness"].as_f64().expect("fairness");
    let (lo, hi) =
        (slowdowns.iter().copied().fold(f64::MAX, f64::min), slowdowns.iter().copied().fold(0.0, f64::max));
    assert!((fairness - lo / hi).abs() < 1e-12 && fairness > 0.0 && fairness <= 1.0, "{fairness}");
    assert!(text.contains("fairness"), "{text}");
}

/// A flow's mean latency over all its commands, from its report.
fn report_mean(f: &Value) -> f64 {
    let ops = f["ops"].as_object().unwrap();
    let n: f64 = ops.values().map(|o| o["count"].as_f64().unwrap()).sum();
    ops.values()
        .map(|o| o["latency_ns"]["mean"].as_f64().unwrap() * o["count"].as_f64().unwrap())
        .sum::<f64>()
        / n
}

#[test]
fn alone_needs_two_jobs_and_no_image() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let e =
        crate::fails(&["run", dev.to_str().unwrap(), "--rw", "randread", "--number-ios", "10", "--alone"]);
    assert!(e.contains("--alone needs two or more jobs"), "{e}");
}

/// A run of one job (or a replay) has one flow, which is the device's totals.
#[test]
fn one_job_is_one_flow_equal_to_the_totals() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let json = dir.path().join("one.json");
    let args = ["run", dev.to_str().unwrap(), "--rw", "randrw", "--numjobs", "2", "--number-ios", "500"];
    let text = ok(&[&args[..], &["--json", json.to_str().unwrap()]].concat());
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0]["ops"], r["ops"]);
    assert_eq!(flows[0]["total"], r["total"]);
    assert_eq!(flows[0]["window_ns"], r["window_ns"]);
    assert_eq!(flows[0]["queues"], serde_json::json!([1, 2]), "one queue per clone");
    assert!(!text.contains("flow (queues)"), "no flow table for one flow: {text}");
}
