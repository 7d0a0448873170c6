//! `ssdlab figure mqsim-fast18 --quick`: MQSim's FAST'18 experiments as one command, as a
//! smoke test: the shapes the full figure shows hold at its two points per experiment, MQSim's
//! results are read from their files, and the output is deterministic.

use serde_json::Value;

use crate::{fails, ok};

fn slowdown(p: &Value, flow: usize) -> f64 {
    p["flows"][flow]["slowdown"].as_f64().unwrap()
}

#[test]
fn mqsim_fast18_quick_shows_the_shapes_and_reads_mqsims_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fig");
    // MQSim's result files for backend contention (only the response times are read).
    let mq = dir.path().join("mqsim/backend-contention");
    std::fs::create_dir_all(&mq).unwrap();
    let xml = |v: &[u32]| {
        v.iter()
            .map(|t| format!("<Host.IO_Flow><Device_Response_Time>{t}</Device_Response_Time>"))
            .collect::<String>()
    };
    for (s, shared, a1, a2) in [(1, [100, 110], 100, 100), (8, [400, 1600], 100, 1000)] {
        let f = |w: &str| mq.join(format!("workload-backend-contention-{w}_scenario_{s}.xml"));
        std::fs::write(f("flow-1-flow-2"), xml(&shared)).unwrap();
        std::fs::write(f("flow-1"), xml(&[a1])).unwrap();
        std::fs::write(f("flow-2"), xml(&[a2])).unwrap();
    }
    let text = ok(&[
        "figure",
        "mqsim-fast18",
        "--quick",
        "--out",
        out.to_str().unwrap(),
        "--mqsim",
        dir.path().join("mqsim").to_str().unwrap(),
    ]);
    assert!(text.contains("backend-contention") && text.contains("data-cache-partitioned"), "{text}");
    let points: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("points.json")).unwrap()).unwrap();
    let of = |k: &str| points.iter().filter(|p| p["experiment"] == k).collect::<Vec<_>>();
    let (be, q16, q1024) = (of("backend-contention"), of("qfs-16"), of("qfs-1024"));
    assert_eq!((be.len(), q16.len(), q1024.len(), of("data-cache-contention").len()), (2, 2, 2, 2));
    // The partitioned run's reports show each flow's half of the cache.
    assert_eq!(of("data-cache-partitioned").len(), 2);
    let part: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("data-cache-partitioned-scenario-6.json")).unwrap(),
    )
    .unwrap();
    let lines = |f: usize| part["flows"][f]["cache"]["lines"].as_u64().unwrap();
    assert!(lines(0) > 0 && lines(0).abs_diff(lines(1)) <= 1, "{}", part["flows"]);
    for p in &points {
        let f = p["fairness"].as_f64().unwrap();
        let s = [slowdown(p, 0), slowdown(p, 1)];
        assert!(f > 0.0 && f <= 1.0 && (f - s[0].min(s[1]) / s[0].max(s[1])).abs() < 1e-9, "{p}");
    }
    // Back-end contention: flow 2 at QD256 slows flow 1 (QD2) down far more than at QD2,
    // and fairness falls.
    assert!(slowdown(be[1], 0) > 2.0 * slowdown(be[0], 0), "{:?}", (slowdown(be[0], 0), slowdown(be[1], 0)));
    assert!(be[1]["fairness"].as_f64() < be[0]["fairness"].as_f64());
    // A fetch size of 16 shields flow 1 from flow 2's 256 commands; 1024 does not.
    assert!(
        slowdown(q16[1], 0) < slowdown(q1024[1], 0),
        "{} vs {}",
        slowdown(q16[1], 0),
        slowdown(q1024[1], 0)
    );
    // MQSim's side: slowdowns 4.0 and 1.6 at scenario 8, fairness 0.4; none where no files.
    assert!((be[1]["mqsim_fairness"].as_f64().unwrap() - 0.4).abs() < 1e-9, "{}", be[1]);
    assert!((be[0]["mqsim_fairness"].as_f64().unwrap() - 1.0 / 1.1).abs() < 1e-9, "{}", be[0]);
    assert!(q16[0]["mqsim_fairness"].is_null());
    for f in [
        "table.csv",
        "points.csv",
        "backend-contention.png",
        "qfs-16.svg",
        "backend-contention-scenario-8.json",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // Deterministic: the same experiment again gives the same points.
    let again = dir.path().join("again");
    ok(&["figure", "mqsim-fast18", "--quick", "--experiment", "qfs-16", "--out", again.to_str().unwrap()]);
    let p2: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(again.join("points.json")).unwrap()).unwrap();
    assert_eq!(p2.len(), 2);
    for (a, b) in p2.iter().zip(&q16) {
        assert_eq!(a["flows"], b["flows"]);
    }
}

#[test]
fn mqsim_fast18_refuses_an_unknown_experiment_in_one_line() {
    let e = fails(&["figure", "mqsim-fast18", "--quick", "--experiment", "nope"]);
    assert!(e.contains("no experiment nope"), "{e}");
}
