//! The CMT partitioned between flows (issue 30, item 3; `ftl.mapping.partition`): with a small
//! CMT, a flow with a small hot mapping footprint keeps its segments cached beside a flow
//! reading all over the drive when the CMT is split, and loses them when it is shared; each
//! flow's partition and lookups show in the report; bad shares fail in one line; the default
//! (shared) leaves the report as it was.

use serde_json::Value;

use crate::{device_file, fails, ok};

/// A hot flow over 2 MiB (8 segments of 64 entries) beside random reads over 80% of the drive
/// (some 700 segments). Reads skip the data cache so that every read looks its entry up.
const HOT_AND_SPREAD: &str = "[global]
time_based=1
runtime=200ms

[hot]
rw=randread
bs=4k
iodepth=1
rate_iops=5000
offset=0
size=2MiB

[spread]
rw=randread
bs=4k
iodepth=16
offset=10%
size=80%
";

/// A 16 KiB CMT: 32 segments of 64 entries.
fn mapping(partition: &str) -> String {
    format!("ftl.mapping={{kind=\"dftl\", cmt=\"16KiB\", segment_entries=64{partition}}}")
}

fn run(dir: &std::path::Path, name: &str, partition: &str) -> Value {
    let dev = device_file(dir, crate::SMALL);
    let file = dir.join(format!("{name}.fio"));
    std::fs::write(&file, HOT_AND_SPREAD).unwrap();
    let json = dir.join(format!("{name}.json"));
    let map = mapping(partition);
    let args = [
        "run",
        dev.to_str().unwrap(),
        "--precondition",
        "seq-fill",
        "--seed",
        "1",
        "--set",
        &map,
        "--set",
        "ftl.cache.read_allocate=false",
        "--job-file",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    ok(&args);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn hit_ratio(r: &Value, flow: usize) -> f64 {
    r["flows"][flow]["cmt"]["hit_ratio"].as_f64().unwrap()
}

#[test]
fn a_partitioned_cmt_keeps_a_small_hot_mapping_footprint_cached() {
    let dir = tempfile::tempdir().unwrap();
    let shared = run(dir.path(), "shared", "");
    let equal = run(dir.path(), "equal", ", partition=\"equal\"");
    // Shared, the spread flow's misses push the hot flow's segments out; split, its 8 segments
    // stay in its 16.
    let (hot_shared, hot_equal) = (hit_ratio(&shared, 0), hit_ratio(&equal, 0));
    assert!(
        hot_equal > 0.9 && hot_shared < 0.6,
        "hot flow's CMT hits: {hot_equal} split, {hot_shared} shared"
    );
    assert!(hit_ratio(&equal, 1) < 0.1 && hit_ratio(&shared, 1) < 0.1);
    // Fewer translation-page reads in front of its data: the hot flow is faster.
    let mean = |r: &Value| r["flows"][0]["ops"]["read"]["latency_ns"]["mean"].as_f64().unwrap();
    assert!(mean(&equal) < 0.9 * mean(&shared), "{} vs {}", mean(&equal), mean(&shared));
    // A shared CMT reports each flow's lookups but no partition; a split one, each flow's half.
    let (hot, spread) = (&equal["flows"][0]["cmt"], &equal["flows"][1]["cmt"]);
    // The fields python/ssdlab/_report.pyi declares as FlowCmt.
    let keys: Vec<&str> = hot.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["hit_ratio", "hits", "misses", "segments"], "{hot}");
    assert!(shared["flows"][0]["cmt"].get("segments").is_none(), "{}", shared["flows"][0]);
    assert_eq!((hot["segments"].as_u64(), spread["segments"].as_u64()), (Some(16), Some(16)));
    // Every read looks its entry up once: the flows' lookups are at least their reads, and they
    // add up to no more than the device's.
    let u = |v: &Value| v.as_u64().unwrap();
    for r in [&shared, &equal] {
        let lookups = |f: usize| u(&r["flows"][f]["cmt"]["hits"]) + u(&r["flows"][f]["cmt"]["misses"]);
        assert!(lookups(0) >= u(&r["flows"][0]["ops"]["read"]["count"]));
        let device = u(&r["cache"]["mapping"]["hits"]) + u(&r["cache"]["mapping"]["misses"]);
        assert!(lookups(0) + lookups(1) <= device, "{} + {} > {device}", lookups(0), lookups(1));
    }
    // Explicit shares: a quarter for the hot flow still holds its 8 segments.
    let shares = run(dir.path(), "shares", ", partition=[0.25, 0.75]");
    assert_eq!(shares["flows"][0]["cmt"]["segments"].as_u64(), Some(8));
    assert_eq!(shares["flows"][1]["cmt"]["segments"].as_u64(), Some(24));
    // Deterministic: the same run again gives the same flows.
    let again = run(dir.path(), "again", ", partition=\"equal\"");
    assert_eq!(again["flows"], equal["flows"]);
}

#[test]
fn bad_cmt_partitions_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let file = dir.path().join("j.fio");
    std::fs::write(&file, HOT_AND_SPREAD).unwrap();
    let run = |sets: &[&str]| {
        // The checks come before ageing: a seq-fill precondition is never started.
        let mut args = vec!["run", dev.to_str().unwrap(), "--precondition", "seq-fill", "--job-file"];
        args.push(file.to_str().unwrap());
        for s in sets {
            args.extend(["--set", s]);
        }
        fails(&args)
    };
    let e = run(&[&mapping(", partition=[0.5, 0.4]")]);
    assert!(e.contains("mapping.partition") && e.contains("the shares sum to 0.9, not 1"), "{e}");
    let e = run(&[&mapping(", partition=[0.2, 0.3, 0.5]")]);
    assert!(e.contains("ftl.mapping.partition: 3 shares for 2 flows"), "{e}");
    let e = run(&[&mapping(", partition=[0.99, 0.01]")]);
    assert!(e.contains("ftl.mapping.partition: flow 2's share is 0 segments, fewer than one segment"), "{e}");
    let e = run(&[&mapping(", partition=\"halves\"")]);
    assert!(e.contains("a partition is \"shared\", \"equal\" or a share per flow"), "{e}");
    let e = run(&[&mapping(", partition=\"equal\""), "host.queues=1"]);
    assert!(
        e.contains("ftl.mapping.partition: jobs hot and spread share queue 1")
            && e.contains("a partitioned CMT knows a flow by its queues"),
        "{e}"
    );
}

#[test]
fn the_default_is_the_shared_cmt_and_changes_no_report() {
    let dir = tempfile::tempdir().unwrap();
    let default = run(dir.path(), "default", "");
    let shared = run(dir.path(), "shared", ", partition=\"shared\"");
    let strip = |mut r: Value| {
        for wall in ["wall_time_s", "requests_per_wall_sec"] {
            r.as_object_mut().unwrap().remove(wall);
        }
        r
    };
    assert_eq!(strip(default.clone()), strip(shared));
    let mapping = &default["device"]["ftl"]["mapping"];
    assert!(mapping.is_object() && mapping.get("partition").is_none(), "{mapping}");
}
