//! Flexible Data Placement end to end: jobs carrying placement identifiers on a device with
//! `[ftl.fdp]`, through the report. Hot and cold data under their own handles amplify writes
//! less than the same data mixed; runs are deterministic; identifiers the device does not have
//! are refused before anything runs.

use firmware::config::DeviceConfig;
use firmware::ftl::Precondition;
use firmware::platform::StoreChoice;
use host::run::RunOptions;
use ssdlab::Start;

/// The small test device (204 MiB logical at 20% spare) with a 1 MiB data cache (so that hot
/// data reaches flash rather than living in DRAM), and `fdp` if given.
fn device(fdp: Option<&str>) -> DeviceConfig {
    let cfg = DeviceConfig::from_toml(crate::SMALL, "small").unwrap();
    let cfg = cfg.set("ftl.op", "0.2").and_then(|c| c.set("ftl.cache.capacity", "1MiB")).unwrap();
    match fdp {
        Some(f) => cfg.set("ftl.fdp", f).unwrap(),
        None => cfg,
    }
}

/// The jobs of `examples/fdp/NAME.fio` (the runs docs/fdp.md reports).
fn example(name: &str) -> Vec<host::workload::JobSpec> {
    let path = format!("{}/../../examples/fdp/{name}.fio", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    host::workload::parse_job_file(&text, &path).unwrap()
}

/// Hot: 16 MiB overwritten at 9000 IOPS; cold: the other 188 MiB at 1000 IOPS; each with its
/// placement identifier if `pids` (a shorter run than the examples', time-based).
fn hot_and_cold(pids: bool, runtime: &str) -> Vec<host::workload::JobSpec> {
    let common = format!("rw=randwrite bs=4k iodepth=16 time_based runtime={runtime}");
    let pid = |n: u16| if pids { format!(" placement=pid:{n}") } else { String::new() };
    vec![
        crate::experiments::job(&format!("{common} offset=0 size=16m rate_iops=9000{}", pid(1))),
        crate::experiments::job(&format!("{common} offset=16m size=188m rate_iops=1000{}", pid(2))),
    ]
}

/// The report of `jobs` on `cfg` after a sequential fill (so GC runs from the start).
fn run(cfg: &DeviceConfig, jobs: &[host::workload::JobSpec], seed: u64) -> report::Report {
    let start = Start::Precondition(Precondition::SeqFill);
    let p = ssdlab::prepare(cfg, &StoreChoice::Metadata, seed, start, &mut |_, _| {}).unwrap();
    ssdlab::measure(&p, jobs, seed, &RunOptions::default(), &mut |_| {}).unwrap()
}

/// Placement identifiers separate the hot stream's short-lived data from the cold stream's
/// long-lived data (`examples/fdp/hotcold.fio`, seed 1, as docs/fdp.md's first table): the
/// cold handle's blocks are never collected (its WAF is 1), while mixed, every user block
/// holds cold units that GC moves when it collects the block for its dead hot units.
#[test]
fn hot_and_cold_under_their_own_handles_amplify_less() {
    let mixed = run(&device(None), &example("hotcold-nopid"), 1);
    let placed = run(&device(Some("{ handles = 3 }")), &example("hotcold"), 1);
    let persistent =
        run(&device(Some("{ handles = 3, isolation = 'persistently' }")), &example("hotcold"), 1);
    assert!(mixed.fdp.is_none());
    // Every run wrote the same.
    assert_eq!(mixed.waf.host_units, 133_340);
    assert_eq!((placed.waf.host_units, persistent.waf.host_units), (133_340, 133_340));
    let f = placed.fdp.as_ref().unwrap();
    let (hot, cold) = (&f.per_handle[1], &f.per_handle[2]);
    assert!(cold.gc_bytes * 100 < cold.host_bytes, "the cold handle's data hardly moved: {cold:?}");
    assert!(hot.waf.unwrap() < mixed.waf.waf, "hot {:?} vs mixed {}", hot.waf, mixed.waf.waf);
    assert!(
        placed.gc.units_moved < mixed.gc.units_moved && persistent.gc.units_moved < placed.gc.units_moved,
        "units moved: mixed {}, initially isolated {}, persistently {}",
        mixed.gc.units_moved,
        placed.gc.units_moved,
        persistent.gc.units_moved
    );
    assert!(persistent.waf.waf < placed.waf.waf && placed.waf.waf < mixed.waf.waf);
    // The report adds up: per-handle host bytes are the device's, and the device's WAF is the
    // report's.
    assert_eq!(f.per_handle.iter().map(|h| h.host_bytes).sum::<u64>(), f.host_bytes);
    assert!((f.waf - placed.waf.waf).abs() < 1e-9);
    assert_eq!(f.per_handle[0].host_bytes, 0, "every write named a handle");
    // FDP on but no identifiers: handle 0 is the FTL's own frontier, the same run.
    let unnamed = run(&device(Some("{ handles = 3 }")), &example("hotcold-nopid"), 1);
    assert_eq!(unnamed.waf.flash_units, mixed.waf.flash_units);
}

/// The same seed gives the same report (wall-clock fields aside), FDP section included.
#[test]
fn fdp_runs_are_deterministic() {
    let cfg = device(Some("{ handles = 3, isolation = 'persistently', ru_blocks = 2 }"));
    let jobs = hot_and_cold(true, "1s");
    let json = |seed| {
        let mut v = serde_json::to_value(run(&cfg, &jobs, seed)).unwrap();
        let o = v.as_object_mut().unwrap();
        assert!(o.remove("wall_time_s").is_some() && o.remove("requests_per_wall_sec").is_some());
        v
    };
    let (a, b) = (json(3), json(3));
    assert_eq!(a, b);
    assert!(a["fdp"]["per_handle"][1]["host_bytes"].as_u64().unwrap() > 0);
    assert_ne!(a["fdp"], json(4)["fdp"]);
}

/// A job naming a placement identifier the device does not have fails before anything runs,
/// with one line naming it; on a device without FDP too.
#[test]
fn unknown_placement_identifiers_are_refused_up_front() {
    fn args(a: &[String; 10]) -> Vec<&str> {
        a.iter().map(String::as_str).collect()
    }
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{}\n[ftl.fdp]\nhandles = 2\n", crate::SMALL.replace("op = 0.15", "op = 0.2"));
    let fdp = crate::device_file(dir.path(), &text);
    let run = |dev: &str, pid: &str| {
        let place = format!("placement={pid}");
        ["run", dev, "--rw", "randwrite", "--number-ios", "100", "--precondition", "none", "--fio", &place]
            .map(String::from)
    };
    let err = crate::fails(&args(&run(fdp.to_str().unwrap(), "pid:2")));
    assert!(err.contains("placement pid:2: the device has 2 reclaim unit handles"), "{err}");
    let out = crate::ok(&args(&run(fdp.to_str().unwrap(), "pid:1")));
    assert!(out.contains("FDP 2 handles x 1 groups"), "{out}");
    let plain = tempfile::tempdir().unwrap();
    let small = crate::device_file(plain.path(), crate::SMALL);
    let err = crate::fails(&args(&run(small.to_str().unwrap(), "pid:0")));
    assert!(err.contains("[ftl.fdp]"), "{err}");
}

/// A multi-volume trace's volumes as FDP streams (`replay --pid-per-volume`): each volume's
/// writes land under its own handle; a device without FDP refuses the option in one line.
#[test]
fn a_traces_volumes_replay_as_placement_identifiers() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("two.spc");
    // SPC: ASU, LBA (512 B sectors), size, opcode, timestamp (s). ASU 0 and 1 alternate.
    let lines: String =
        (0..400u64).map(|i| format!("{},{},4096,w,{:.4}\n", i % 2, (i / 2) * 8, i as f64 * 1e-4)).collect();
    std::fs::write(&trace, lines).unwrap();
    let text = format!("{}\n[ftl.fdp]\nhandles = 2\n", crate::SMALL.replace("op = 0.15", "op = 0.2"));
    let fdp = crate::device_file(dir.path(), &text);
    let json = dir.path().join("r.json");
    let (t, d, j) = (trace.to_str().unwrap(), fdp.to_str().unwrap(), json.to_str().unwrap());
    crate::ok(&[
        "replay",
        t,
        d,
        "--pid-per-volume",
        "--volume-stride",
        "16MiB",
        "--precondition",
        "none",
        "--json",
        j,
    ]);
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let per = r["fdp"]["per_handle"].as_array().unwrap();
    let host = |h: usize| per[h]["host_bytes"].as_u64().unwrap();
    assert_eq!((host(0), host(1)), (200 * 4096, 200 * 4096), "{per:?}");
    let plain = tempfile::tempdir().unwrap();
    let small = crate::device_file(plain.path(), crate::SMALL);
    let err =
        crate::fails(&["replay", t, small.to_str().unwrap(), "--pid-per-volume", "--precondition", "none"]);
    assert!(err.contains("[ftl.fdp]"), "{err}");
}
