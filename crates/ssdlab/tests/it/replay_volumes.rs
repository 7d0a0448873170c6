//! Multi-tenant traces (issue 30, item 5): a trace's volumes replayed as flows of their own,
//! laid out by footprint (disjoint regions) or folded (with a warning), each with its placement
//! identifier and queue priority from the command line or a TOML file; the flows add up to the
//! device; the same seed gives the same report; what is wrong is said in one line.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{SMALL, device_file, fails, ssdlab};

/// An SPC trace of three volumes with different footprints: volume 0 reads and writes its first
/// 4 MiB, volume 2 writes up to 12 MiB, volume 5 reads 1 MiB (LBAs in 512-byte sectors).
fn three_volumes(dir: &Path) -> PathBuf {
    let mut lines = String::new();
    for i in 0..600u64 {
        let t = i as f64 * 2e-5;
        let (vol, lba, op, size) = match i % 3 {
            0 => (0, (i * 7 % 1024) * 8, if i % 2 == 0 { 'w' } else { 'r' }, 4096),
            1 => (2, (i * 13 % 1536) * 16, 'w', 8192),
            _ => (5, (i * 5 % 256) * 8, 'r', 4096),
        };
        lines += &format!("{vol},{lba},{size},{op},{t:.6}\n");
    }
    let path = dir.join("three.spc");
    std::fs::write(&path, lines).unwrap();
    path
}

/// `ssdlab replay TRACE DEVICE --precondition none --json J EXTRA...`: (report, stdout, stderr).
fn replay(trace: &Path, device: &Path, json: &Path, extra: &[&str]) -> (Value, String, String) {
    let mut args =
        vec!["replay", trace.to_str().unwrap(), device.to_str().unwrap(), "--precondition", "none", "--json"];
    args.push(json.to_str().unwrap());
    args.extend(extra);
    let out = ssdlab(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "ssdlab {args:?}: {stderr}");
    let report = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (report, String::from_utf8(out.stdout).unwrap(), stderr)
}

/// The flows' requests, bytes and errors sum to the device's, by direction.
fn assert_flows_add_up(r: &Value) {
    let flows = r["flows"].as_array().unwrap();
    for (op, o) in r["ops"].as_object().unwrap() {
        for field in ["count", "bytes", "errors"] {
            let device = o[field].as_u64().unwrap();
            let sum: u64 = flows.iter().map(|f| f["ops"][op][field].as_u64().unwrap_or(0)).sum();
            assert_eq!(sum, device, "{op} {field}: flows {sum}, device {device}");
        }
    }
}

#[test]
fn volumes_replay_as_flows_in_disjoint_footprint_regions() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, dev) = (three_volumes(dir.path()), device_file(dir.path(), SMALL));
    let json = dir.path().join("r.json");
    let (r, text, stderr) =
        replay(&trace, &dev, &json, &["--volume-flows", "--layout", "footprint", "--mode", "closed"]);
    // One flow per volume, each on its own queue, with its own figures.
    let flows = r["flows"].as_array().unwrap();
    let names: Vec<&str> = flows.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["vol 0", "vol 2", "vol 5"]);
    let queues: Vec<u64> = flows.iter().map(|f| f["queues"][0].as_u64().unwrap()).collect();
    assert_eq!(queues, [1, 2, 3]);
    assert_eq!(flows[0]["total"]["count"], 200);
    assert!(flows[2]["ops"].get("write").is_none(), "volume 5 only reads");
    assert_eq!(flows[1]["ops"]["write"]["bytes"], 200 * 8192);
    assert_flows_add_up(&r);
    // Regions: sized by footprint (1 MiB aligned), packed in volume order, disjoint.
    let layout = &r["replay"]["layout"];
    assert_eq!(layout["kind"], "footprint");
    let vols = layout["volumes"].as_array().unwrap();
    let region = |i: usize| (vols[i]["base"].as_u64().unwrap(), vols[i]["size"].as_u64().unwrap());
    const MIB: u64 = 1 << 20;
    assert_eq!([region(0), region(1), region(2)], [(0, 4 * MIB), (4 * MIB, 12 * MIB), (16 * MIB, MIB)]);
    for v in vols {
        assert!(v["size"].as_u64() >= v["footprint"].as_u64(), "{v}");
    }
    assert_eq!(r["replay"]["folded"], 0, "nothing folds in its own region");
    assert!(!stderr.contains("fold onto"), "{stderr}");
    // The layout is printed before the run; the summary has the flow table.
    assert!(stderr.contains("layout: 3 volume(s), each its own region"), "{stderr}");
    assert!(text.contains("flow (queues)") && text.contains("vol 2 (2)"), "{text}");
}

#[test]
fn folded_volumes_warn_and_the_rest_group_or_drop() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, dev) = (three_volumes(dir.path()), device_file(dir.path(), SMALL));
    let json = dir.path().join("r.json");
    let (r, _, stderr) = replay(&trace, &dev, &json, &["--volume-flows"]);
    let warning = stderr.lines().find(|l| l.starts_with("warning:")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(warning.contains("3 of 3 volumes fold onto the same device addresses"), "{warning}");
    assert_eq!(r["replay"]["layout"]["folded_volumes"], 3);
    assert_flows_add_up(&r);
    // Volume 2 named; the others one flow, or dropped.
    let (g, _, _) = replay(&trace, &dev, &json, &["--volume", "2", "--other-volumes", "group"]);
    let names: Vec<&str> =
        g["flows"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["others", "vol 2"]);
    assert_eq!(g["flows"][0]["total"]["count"], 400);
    assert_flows_add_up(&g);
    let (d, _, _) = replay(&trace, &dev, &json, &["--volume", "2", "--other-volumes", "drop"]);
    assert_eq!(d["replay"]["dropped"], 400);
    assert_eq!(d["total"]["count"], 200);
    assert_eq!(d["flows"].as_array().unwrap().len(), 1);
    // With the stride, volumes that do not overlap do not warn.
    let (s, _, stderr) = replay(&trace, &dev, &json, &["--volume-flows", "--volume-stride", "16MiB"]);
    assert_eq!(s["replay"]["layout"]["folded_volumes"], 0);
    assert!(!stderr.contains("fold onto"), "{stderr}");
}

#[test]
fn same_seed_same_report_with_volume_flows() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, dev) = (three_volumes(dir.path()), device_file(dir.path(), SMALL));
    let run = |name: &str| {
        let json = dir.path().join(name);
        let (mut r, _, _) =
            replay(&trace, &dev, &json, &["--volume-flows", "--layout", "footprint", "--seed", "3"]);
        let o = r.as_object_mut().unwrap();
        assert!(o.remove("wall_time_s").is_some() && o.remove("requests_per_wall_sec").is_some());
        r
    };
    let (a, b) = (run("a.json"), run("b.json"));
    assert_eq!(a["flows"].as_array().unwrap().len(), 3);
    assert_eq!(a, b, "same seed, same report");
}

#[test]
fn placement_and_priority_per_volume_from_a_file_or_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = three_volumes(dir.path());
    let text = format!("{}\n[ftl.fdp]\nhandles = 2\n", SMALL.replace("op = 0.15", "op = 0.2"));
    let fdp = device_file(dir.path(), &text);
    let file = dir.path().join("volumes.toml");
    std::fs::write(&file, "other = \"group\"\n[volume.2]\npid = 1\npriority = \"urgent\"\n").unwrap();
    let json = dir.path().join("r.json");
    let extra = ["--volume-file", file.to_str().unwrap(), "--set", "host.arbitration.kind=weighted"];
    let (r, _, stderr) = replay(&trace, &fdp, &json, &extra);
    assert!(!stderr.contains("round robin"), "weighted arbitration: no warning: {stderr}");
    let vols = r["replay"]["layout"]["volumes"].as_array().unwrap();
    assert_eq!((vols[1]["volume"].as_u64(), vols[1]["pid"].as_u64()), (Some(2), Some(1)));
    assert_eq!(vols[1]["priority"], "urgent");
    assert_eq!(vols[0]["flow"], "others");
    assert!(vols[0]["pid"].is_null());
    // Volume 2's writes (200 of 8 KiB) under handle 1; volume 0's (100 of 4 KiB) under 0.
    let per = r["fdp"]["per_handle"].as_array().unwrap();
    let host = |h: usize| per[h]["host_bytes"].as_u64().unwrap();
    assert_eq!((host(0), host(1)), (100 * 4096, 200 * 8192), "{per:?}");
    // The same from the command line.
    let (c, _, _) = replay(&trace, &fdp, &json, &["--volume", "2:pid=1,priority=urgent", "--set", extra[3]]);
    assert_eq!(c["replay"]["layout"]["volumes"][1]["pid"], 1);
    assert_eq!(c["replay"]["layout"]["volumes"][1]["priority"], "urgent");
}

/// A priority class under round robin arbitration would do nothing: a replay volume's
/// `priority` is refused as a job's `queue_priority` is, with the same one-line message.
#[test]
fn priority_without_weighted_arbitration_is_refused_for_volumes_as_for_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, dev) = (three_volumes(dir.path()), device_file(dir.path(), SMALL));
    let (t, d) = (trace.to_str().unwrap(), dev.to_str().unwrap());
    let tail = "needs weighted round robin arbitration (set host.arbitration = { kind = \"weighted\" })";
    let e = fails(&["replay", t, d, "--precondition", "none", "--volume", "2:priority=urgent"]);
    assert!(e.contains(&format!("volume 2: priority {tail}")), "{e}");
    let file = dir.path().join("v.toml");
    std::fs::write(&file, "[volume.5]\npriority = \"low\"\n").unwrap();
    let e = fails(&["replay", t, d, "--precondition", "none", "--volume-file", file.to_str().unwrap()]);
    assert!(e.contains(&format!("volume 5: priority {tail}")), "{e}");
    let e = fails(&["run", d, "--trace", t, "--volume-flows", "--volume", "0:priority=high"]);
    assert!(e.contains(&format!("volume 0: priority {tail}")), "{e}");
    let e = fails(&["run", d, "--fio", "rw=randread", "--fio", "queue_priority=urgent"]);
    assert!(e.contains("job ") && e.contains(&format!(": queue_priority {tail}")), "{e}");
}

#[test]
fn what_is_wrong_with_volumes_is_said_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, dev) = (three_volumes(dir.path()), device_file(dir.path(), SMALL));
    let (t, d) = (trace.to_str().unwrap(), dev.to_str().unwrap());
    let base = ["replay", t, d, "--precondition", "none"];
    let err = |extra: &[&str]| fails(&[&base[..], extra].concat());
    let e = err(&["--volume", "7"]);
    assert!(e.contains("the trace has no volume 7 (it has 3: 0, 2, 5)"), "{e}");
    let e = err(&["--volume", "2:priority=urgnt"]);
    assert!(e.contains("unknown priority 'urgnt' (urgent, high, medium or low)"), "{e}");
    let e = err(&["--volume", "2:weight=3"]);
    assert!(e.contains("unknown key 'weight'"), "{e}");
    let file = dir.path().join("v.toml");
    std::fs::write(&file, "[volume.2]\npriority = \"top\"\n").unwrap();
    let e = err(&["--volume-file", file.to_str().unwrap()]);
    assert!(e.contains("unknown priority 'top'"), "{e}");
    let e = err(&["--volume", "2:pid=1"]);
    assert!(e.contains("volume 2") && e.contains("fdp"), "{e}");
    // A volume far beyond the small device: its region does not fit, unless scaled down.
    let big = dir.path().join("big.spc");
    std::fs::write(&big, "0,0,4096,w,0\n1,8388608,4096,w,0.001\n").unwrap();
    let b = big.to_str().unwrap();
    let e = fails(&["replay", b, d, "--precondition", "none", "--layout", "footprint"]);
    assert!(e.contains("volume regions do not fit") && e.contains("--fit"), "{e}");
    let json = dir.path().join("r.json");
    let (r, _, _) = replay(&big, &dev, &json, &["--layout", "footprint", "--fit", "--volume-flows"]);
    let layout = &r["replay"]["layout"];
    assert!(layout["scale"].as_f64().unwrap() < 0.1, "{layout}");
    let v = layout["volumes"].as_array().unwrap();
    assert!(
        v[0]["base"].as_u64().unwrap() + v[0]["size"].as_u64().unwrap() <= v[1]["base"].as_u64().unwrap()
    );
}

/// A real multi-volume trace: the TPC-C sample's 16 volumes on pipessd, scaled into regions,
/// one volume urgent and the rest grouped; the flows add up to the device.
#[test]
fn the_shared_tpcc_trace_replays_as_volume_flows() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/tpcc-sample.mqsim.trace.gz");
    if !p.exists() {
        eprintln!("shared trace {} not found; skipping", p.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let args = ["replay", p.to_str().unwrap(), "pipessd", "--precondition", "none", "--json"];
    let out = ssdlab(
        &[&args[..], &[json.to_str().unwrap(), "--layout", "footprint", "--fit", "--volume-flows"]].concat(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let layout = &r["replay"]["layout"];
    assert_eq!(layout["volumes"].as_array().unwrap().len(), 16);
    assert_eq!((layout["flows"].as_u64(), layout["queues"].as_u64()), (Some(16), Some(16)));
    assert_eq!(r["flows"].as_array().unwrap().len(), 16);
    assert_eq!(r["total"]["count"], 6999);
    assert_flows_add_up(&r);
    // More flows than queues: they share, and the run says so.
    let out = ssdlab(&[&args[..], &[json.to_str().unwrap(), "--volume-flows", "--queues", "4"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("note: 16 flows share 4 queue pairs round robin"), "{stderr}");
    assert!(stderr.contains("warning: 16 of 16 volumes fold"), "{stderr}");
}

/// Many volumes (a cloud-block trace has thousands): more flows than queues share them round
/// robin, the note says so, the report keeps every flow and the text table the first 32.
#[test]
fn more_volumes_than_queues_share_them() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String =
        (0..400u64).map(|i| format!("{},{},4096,r,{:.4}\n", i % 40, i * 8, i as f64 * 1e-4)).collect();
    let trace = dir.path().join("forty.spc");
    std::fs::write(&trace, lines).unwrap();
    let dev = device_file(dir.path(), SMALL);
    let json = dir.path().join("r.json");
    let (r, text, stderr) = replay(&trace, &dev, &json, &["--volume-flows", "--layout", "footprint"]);
    assert!(stderr.contains("note: 40 flows share 16 queue pairs round robin"), "{stderr}");
    assert!(stderr.contains("... and 28 more volumes"), "{stderr}");
    let flows = r["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 40);
    assert_eq!(flows[17]["queues"], serde_json::json!([2]), "flow 17 on queue 17 mod 16 + 1");
    assert_flows_add_up(&r);
    assert!(text.contains("... and 8 more flows (the report's flows has them all)"), "{text}");
    assert!(text.contains("vol 31 (16)") && !text.contains("vol 32 ("), "{text}");
}

/// `--alone` for a replay (issue 30): each volume flow replayed by itself on the same starting
/// state and layout; its alone latency is that of a replay of its records only, and the report
/// carries every flow's slowdown and the fairness index, the same for the same seed.
#[test]
fn alone_replays_each_volume_flow_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, dev) = (three_volumes(dir.path()), device_file(dir.path(), SMALL));
    let run = |name: &str| {
        let json = dir.path().join(name);
        let (mut r, _, stderr) = replay(&trace, &dev, &json, &["--volume-flows", "--alone", "--seed", "3"]);
        assert!(stderr.contains("alone: flow vol 5 (3 of 3)"), "{stderr}");
        let o = r.as_object_mut().unwrap();
        assert!(o.remove("wall_time_s").is_some() && o.remove("requests_per_wall_sec").is_some());
        r
    };
    let (a, b) = (run("a.json"), run("b.json"));
    assert_eq!(a, b, "same seed, same slowdowns");
    let flows = a["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 3);
    let slowdowns: Vec<f64> = flows.iter().map(|f| f["slowdown"].as_f64().expect("a slowdown")).collect();
    let (lo, hi) = slowdowns.iter().fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert_eq!(a["fairness"].as_f64(), Some(lo / hi), "{slowdowns:?}");
    // Volume 5 (the third flow) alone: exactly a replay of a trace holding only its records
    // (offsets layout: its addresses do not depend on the other volumes).
    let only5: String = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("5,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let t5 = dir.path().join("five.spc");
    std::fs::write(&t5, only5).unwrap();
    let (solo, _, _) = replay(&t5, &dev, &dir.path().join("s.json"), &["--volume-flows", "--seed", "3"]);
    let by_itself = solo["ops"]["read"]["latency_ns"]["mean"].as_f64();
    let alone = flows[2]["alone_latency_mean_ns"].as_f64();
    assert!(alone.is_some_and(|x| x > 0.0), "{:?}", flows[2]);
    assert_eq!(alone, by_itself, "the same records on the same starting state");
}

#[test]
fn alone_for_a_replay_needs_volume_flows() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, dev) = (three_volumes(dir.path()), device_file(dir.path(), SMALL));
    let e = fails(&["replay", trace.to_str().unwrap(), dev.to_str().unwrap(), "--alone"]);
    assert!(e.contains("--alone replays each volume flow by itself: add --volume-flows"), "{e}");
}
