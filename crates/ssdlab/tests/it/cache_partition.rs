//! The data cache partitioned between flows (issue 30, item 3; `ftl.cache.partition`): a
//! flow with a small hot set keeps it beside a streaming neighbour when the cache is split,
//! and loses it when the cache is shared; each flow's partition shows in the report; bad
//! shares fail in one line; the default (shared) leaves the report as it was.

use serde_json::Value;

use crate::{device_file, fails, ok};

/// examples/multi-tenant/cache-hot.fio, with a smaller hot set (it warms up sooner).
const HOT_AND_STREAM: &str = "[global]
time_based=1
runtime=200ms

[hot]
rw=randread
bs=4k
iodepth=1
rate_iops=5000
offset=0
size=256KiB

[stream]
rw=read
bs=128k
iodepth=16
offset=10%
size=80%
";

fn run(dir: &std::path::Path, name: &str, jobs: &str, sets: &[&str]) -> Value {
    let dev = device_file(dir, crate::SMALL);
    let file = dir.join(format!("{name}.fio"));
    std::fs::write(&file, jobs).unwrap();
    let json = dir.join(format!("{name}.json"));
    let mut args = vec![
        "run",
        dev.to_str().unwrap(),
        "--precondition",
        "seq-fill",
        "--seed",
        "1",
        "--set",
        "ftl.cache.capacity=4MiB",
        "--job-file",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    ok(&args);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn mean_read_us(r: &Value, flow: usize) -> f64 {
    r["flows"][flow]["ops"]["read"]["latency_ns"]["mean"].as_f64().unwrap() / 1e3
}

#[test]
fn a_partitioned_cache_protects_a_small_hot_set_from_a_streaming_neighbour() {
    let dir = tempfile::tempdir().unwrap();
    let shared = run(dir.path(), "shared", HOT_AND_STREAM, &[]);
    let equal = run(dir.path(), "equal", HOT_AND_STREAM, &["ftl.cache.partition=\"equal\""]);
    let (hot_shared, hot_equal) = (mean_read_us(&shared, 0), mean_read_us(&equal, 0));
    assert!(hot_equal < 0.6 * hot_shared, "hot flow: {hot_equal:.0} us split vs {hot_shared:.0} us shared");
    // A shared cache reports no partitions; a split one, each flow's half and its hits.
    assert!(shared["flows"][0].get("cache").is_none(), "{}", shared["flows"][0]);
    let (hot, stream) = (&equal["flows"][0]["cache"], &equal["flows"][1]["cache"]);
    // The fields python/ssdlab/_report.pyi declares as FlowCache.
    let keys: Vec<&str> = hot.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["lines", "read_hit_ratio", "read_hits", "read_misses"], "{hot}");
    assert_eq!((hot["lines"].as_u64(), stream["lines"].as_u64()), (Some(512), Some(512)));
    let ratio = |c: &Value| c["read_hit_ratio"].as_f64().unwrap();
    assert!(ratio(hot) > 0.5 && ratio(stream) < 0.05, "hot {hot}, stream {stream}");
    // The flows' reads add up to the device's lookups of the cache.
    let reads = |c: &Value| c["read_hits"].as_u64().unwrap() + c["read_misses"].as_u64().unwrap();
    assert!(reads(hot) >= equal["flows"][0]["ops"]["read"]["count"].as_u64().unwrap());
    // Explicit shares: a quarter for the hot flow still holds its 64 units.
    let shares = run(dir.path(), "shares", HOT_AND_STREAM, &["ftl.cache.partition=[0.25, 0.75]"]);
    assert_eq!(shares["flows"][0]["cache"]["lines"].as_u64(), Some(256));
    assert_eq!(shares["flows"][1]["cache"]["lines"].as_u64(), Some(768));
    // Deterministic: the same run again gives the same flows.
    let again = run(dir.path(), "again", HOT_AND_STREAM, &["ftl.cache.partition=\"equal\""]);
    assert_eq!(again["flows"], equal["flows"]);
}

#[test]
fn partitioned_writes_write_back_within_each_flows_share() {
    // Two write flows, one of them heavy, in a small cache split unevenly: both finish (each
    // partition starts its own write-backs) and the device's counts stay consistent.
    let dir = tempfile::tempdir().unwrap();
    let jobs = "[global]\nrw=randwrite\nbs=4k\nnumber_ios=6000\n[light]\niodepth=2\nsize=32MiB\n[heavy]\niodepth=32\noffset=10%\nsize=50%\n";
    for (name, mode) in [("a", "ftl.cache.partition=[0.2, 0.8]"), ("b", "ftl.cache.write_back=\"on-demand\"")]
    {
        let sets: Vec<&str> =
            if name == "b" { vec![mode, "ftl.cache.partition=\"equal\""] } else { vec![mode] };
        let r = run(dir.path(), name, jobs, &sets);
        let count = |f: usize| r["flows"][f]["ops"]["write"]["count"].as_u64().unwrap();
        assert_eq!((count(0), count(1)), (6000, 6000), "{name}");
        assert!(r["flows"][1]["cache"]["lines"].as_u64().unwrap() > 0);
    }
}

#[test]
fn bad_partitions_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let file = dir.path().join("j.fio");
    std::fs::write(&file, HOT_AND_STREAM).unwrap();
    let run = |sets: &[&str]| {
        let mut args = vec!["run", dev.to_str().unwrap(), "--precondition", "none", "--job-file"];
        args.push(file.to_str().unwrap());
        for s in sets {
            args.extend(["--set", s]);
        }
        fails(&args)
    };
    let e = run(&["ftl.cache.partition=[0.5, 0.4]"]);
    assert!(e.contains("cache.partition") && e.contains("the shares sum to 0.9, not 1"), "{e}");
    let e = run(&["ftl.cache.partition=[0.2, 0.3, 0.5]"]);
    assert!(e.contains("ftl.cache.partition: 3 shares for 2 flows"), "{e}");
    let e = run(&["ftl.cache.partition=[0.9999, 0.0001]"]);
    assert!(e.contains("flow 2's share is") && e.contains("fewer than one write-back takes"), "{e}");
    let e = run(&["ftl.cache.partition=\"halves\""]);
    assert!(e.contains("partition"), "{e}");
    let e = run(&["ftl.cache.partition=\"equal\"", "host.queues=1"]);
    assert!(
        e.contains("jobs hot and stream share queue 1") && e.contains("knows a flow by its queues"),
        "{e}"
    );
}

#[test]
fn the_default_is_the_shared_cache_and_changes_no_report() {
    let dir = tempfile::tempdir().unwrap();
    let default = run(dir.path(), "default", HOT_AND_STREAM, &[]);
    let shared = run(dir.path(), "shared", HOT_AND_STREAM, &["ftl.cache.partition=\"shared\""]);
    let strip = |mut r: Value| {
        for wall in ["wall_time_s", "requests_per_wall_sec"] {
            r.as_object_mut().unwrap().remove(wall);
        }
        r
    };
    assert_eq!(strip(default.clone()), strip(shared));
    let cache = &default["device"]["ftl"]["cache"];
    assert!(cache.is_object() && cache.get("partition").is_none(), "{cache}");
}
