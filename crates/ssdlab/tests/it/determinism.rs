//! The same configuration, workload and seed give a bit-identical report (wall-clock fields
//! aside); another seed gives another report.

use firmware::platform::StoreChoice;

fn report_json(seed: u64) -> serde_json::Value {
    report_json_on("pipessd", seed)
}

/// The report of a run on the pipessd device with the architecture `kind`.
fn report_json_on(kind: &str, seed: u64) -> serde_json::Value {
    let cfg = firmware::presets::get("pipessd").unwrap().unwrap();
    let cfg = if kind == "pipessd" { cfg } else { cfg.set("architecture.kind", kind).unwrap() };
    let jobs = [crate::experiments::job(
        "rw=randrw rwmixread=60 bs=4k bssplit=4k/70:16k/30 iodepth=8 numjobs=3 number_ios=3000 size=256m",
    )];
    let r = ssdlab::simulate(&cfg, &jobs, seed, &StoreChoice::Metadata, &mut |_| {}).unwrap();
    let mut v = serde_json::to_value(&r).unwrap();
    let o = v.as_object_mut().unwrap();
    assert!(o.remove("wall_time_s").is_some() && o.remove("requests_per_wall_sec").is_some());
    v
}

#[test]
fn same_inputs_same_report() {
    let (a, b) = (report_json(11), report_json(11));
    assert_eq!(a, b);
    assert_eq!(a["schema"], "ssdlab.report/1");
    assert_eq!(a["total"]["count"], 9000);
    assert_ne!(a, report_json(12));
}

/// Every architecture is deterministic too (its locks, stage queues and wait list included),
/// and they differ from each other.
#[test]
fn every_architecture_gives_the_same_report_for_the_same_inputs() {
    let mut seen = Vec::new();
    for kind in ["softssd", "tradition", "deepflash"] {
        let (a, b) = (report_json_on(kind, 5), report_json_on(kind, 5));
        assert_eq!(a, b, "{kind}");
        assert!(a["architecture"]["name"].as_str().unwrap().starts_with(kind), "{kind}");
        seen.push(a);
    }
    assert_eq!(seen[1]["architecture"]["locks"].as_array().unwrap().len(), 4, "tradition's lock classes");
    assert_ne!(seen[0]["ops"], seen[1]["ops"]);
    assert_ne!(seen[1]["ops"], seen[2]["ops"]);
    let p = report_json_on("pipessd", 5);
    assert_eq!(p["architecture"]["queues"].as_array().unwrap().len(), 3, "pipessd's stage queues");
}
