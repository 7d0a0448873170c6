//! The same configuration, workload and seed give a bit-identical report (wall-clock fields
//! aside); another seed gives another report.

use firmware::platform::StoreChoice;

fn report_json(seed: u64) -> serde_json::Value {
    let cfg = firmware::presets::get("pipessd").unwrap().unwrap();
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
