//! The systems beyond one SSD, end to end: a bridge over several SSDs (BSSD) and a raw array
//! under a host-side FTL give bit-identical reports for the same inputs (power and host
//! resources included); bad power parameters, placements and host interfaces are one-line
//! errors; the array figure runs; jobs overlapping on a host-side FTL complete.

use firmware::config::DeviceConfig;
use firmware::platform::StoreChoice;
use host::run::RunOptions;
use ssdlab::Start;

use crate::{fails, ok};

/// A bridge over three small SSDs.
const BRIDGE: &str = r#"
name = "small-bssd"
[system]
kind = "bridge"
drives = 3
stripe = "16KiB"
[geometry]
channels = 2
ways = 2
planes = 2
blocks = 24
pages = 32
page_size = "16KiB"
[host]
queues = 2
link = { protocol = "sata", generation = 3, lanes = 1 }
[ftl]
op = 0.3
cache = { capacity = "512KiB" }
"#;

/// A small raw array under a host-side FTL, with a host write buffer.
const HOST_FTL: &str = r#"
name = "small-hostftl"
[system]
kind = "host-ftl"
groups = 2
array = { channels_per_controller = 2, sram = "1MiB" }
host = { cores = 2 }
write = { buffer = "256KiB" }
[geometry]
channels = 4
ways = 1
dies = 2
blocks = 24
pages = 32
page_size = "16KiB"
oob_size = "0B"
[controller]
cores = [{ name = "array scheduler", clock = "250MHz" }]
[architecture]
kind = "softssd"
hil_core = 0
fil_core = 0
ecc_core = 0
[ftl]
op = 0.3
mapping = { kind = "full" }
"#;

fn report_json(toml: &str, seed: u64) -> serde_json::Value {
    let cfg = DeviceConfig::from_toml(toml, "test").unwrap();
    let rig = ssdlab::prepare_rig(&cfg, &StoreChoice::Metadata, seed, Start::Fresh, &mut |_, _| {}).unwrap();
    let jobs = [crate::experiments::job(
        "rw=randrw rwmixread=30 bs=4k bssplit=4k/70:64k/30 iodepth=8 numjobs=3 number_ios=6000 size=16m io_size=1g",
    )];
    let opts = RunOptions { interval: sim::SimDuration::from_micros(500), ..RunOptions::default() };
    let (r, _) =
        ssdlab::measure_system(rig.system(), &rig.initial_state, &jobs, seed, &opts, &mut |_| {}).unwrap();
    assert!(r.gc.invocations > 0, "GC ran in the runs compared: {} {:?} {:?}", cfg.name, r.gc, r.waf);
    let mut v = serde_json::to_value(&r).unwrap();
    let o = v.as_object_mut().unwrap();
    assert!(o.remove("wall_time_s").is_some() && o.remove("requests_per_wall_sec").is_some());
    v
}

#[test]
fn same_inputs_same_report_for_a_bridge_and_a_host_side_ftl() {
    for toml in [BRIDGE, HOST_FTL] {
        let (a, b) = (report_json(toml, 5), report_json(toml, 5));
        assert_eq!(a, b);
        assert!(a["energy"]["total_j"].as_f64().unwrap() > 0.0);
        assert!(a["host_stack"]["memory_bytes"].as_u64().unwrap() > 0);
        assert!(!a["timeseries"]["power_w"]["device"].as_array().unwrap().is_empty());
        assert_ne!(a, report_json(toml, 6));
    }
}

#[test]
fn bad_power_parameters_placements_and_interfaces_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let good = format!("{}\n[power]\n", crate::SMALL.trim_end());
    let negative = file(
        "neg.toml",
        &format!(
            "{good}nand = {{ read_uj = 4.0, program_uj = -1.0, erase_uj = 200.0, die_idle_mw = 0.1 }}\n"
        ),
    );
    let e = fails(&["run", &negative, "--precondition", "none"]);
    assert!(e.contains("power.nand.program_uj: must be a number of at least 0 (got -1)"), "{e}");
    let missing = file("missing.toml", &format!("{good}nand = {{ read_uj = 4.0, program_uj = 40.0 }}\n"));
    let e = fails(&["run", &missing, "--precondition", "none"]);
    assert!(e.contains("missing field `erase_uj`"), "{e}");
    let array = file("array.toml", HOST_FTL);
    let e = fails(&[
        "run",
        &array,
        "--precondition",
        "none",
        "--rw",
        "randwrite",
        "--number-ios",
        "10",
        "--fio",
        "placement=die:8",
    ]);
    assert!(e.contains("placement die:8: the array has 8 dies (0 to 7)"), "{e}");
    let e = fails(&[
        "run",
        &array,
        "--precondition",
        "none",
        "--rw",
        "randwrite",
        "--number-ios",
        "10",
        "--fio",
        "placement=group:2",
    ]);
    assert!(e.contains("placement group:2: the array has 2 channel groups (0 to 1)"), "{e}");
    let e = fails(&["run", "--precondition", "none", "--number-ios", "10", "--fio", "placement=die:0"]);
    assert!(e.contains("only a host-side FTL takes a placement"), "{e}");
    let bad = crate::ssdlab(&["run", "--interface", "scsi"]);
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("unknown host interface `scsi` (expected nvme, legacy or legacy-ncq)")
    );
    let out = ok(&[
        "run",
        &array,
        "--precondition",
        "none",
        "--rw",
        "randwrite",
        "--bs",
        "64k",
        "--number-ios",
        "200",
        "--fio",
        "placement=group:1",
    ]);
    assert!(out.contains("host stack:"), "{out}");
}

#[test]
fn the_array_figure_runs_and_sets_each_value_beside_the_published_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&["figure", "hostftl-array", "--quick", "--out", dir.path().to_str().unwrap()]);
    for row in [
        "seq write, super-page",
        "seq write, pipelined",
        "4 KiB random IOPS, QD16 x 4",
        "host-directed allocation",
    ] {
        assert!(out.contains(row), "no {row:?} row in:\n{out}");
    }
    let placed = out.lines().filter(|l| l.contains("landing on") || l.contains("landing in"));
    assert!(placed.clone().count() == 2 && placed.into_iter().all(|l| l.contains("100.0%")), "{out}");
    let table: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("table.json")).unwrap()).unwrap();
    assert!(table.as_array().unwrap().len() > 20);
    assert!(dir.path().join("seq-write-super-page/power.png").exists());
}

/// `ssdlab run hostftl-array --fio placement=group:2 --rw write --bs 1m` (a README command)
/// panicked with "no entry found for key" in the host FTL's write path: its four jobs write
/// the same range, and once writes waited for space a unit could be rewritten and programmed
/// by a later command before the earlier one placed it. Here at 86 blocks per plane, where
/// 2,000 writes per job reached that window in about a second.
#[test]
fn overlapping_jobs_on_a_host_side_ftl() {
    let out = ok(&[
        "run",
        "hostftl-array",
        "--blocks",
        "86",
        "--fio",
        "placement=group:2",
        "--rw",
        "write",
        "--bs",
        "1m",
        "--numjobs",
        "4",
        "--number-ios",
        "2000",
    ]);
    assert!(out.contains("write       8000"), "{out}");
}

/// The PipeSSD figure's smoke run on the paper's platform, shrunk to 256 blocks per plane.
const PAPER_QUICK: [&str; 7] =
    ["figure", "pipessd", "--preset", "pipessd-paper", "--quick", "--blocks", "256"];

/// The shared trace directory the PipeSSD figure replays, or `None` (saying the test skips)
/// where it is missing.
fn shared_traces() -> Option<std::path::PathBuf> {
    let traces = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    if traces.join("websearch-sample.spc.gz").exists() {
        return Some(traces);
    }
    eprintln!("skipped: the shared traces are not at {}", traces.display());
    None
}

/// Issue 32: PipeSSD's gain over Tradition-4 comes from Tradition's threads being held across
/// flash operations. At one request per thread (the paper's full-function threads) PipeSSD is
/// ahead on every workload; at the preset's 64 the two are level (docs/architectures.md).
#[test]
fn pipessd_beats_tradition_4_only_when_its_threads_hold_few_requests() {
    let Some(traces) = shared_traces() else { return };
    let ratios = |per_thread: Option<&str>| -> Vec<(String, f64)> {
        let dir = tempfile::tempdir().unwrap();
        let t = traces.to_str().unwrap();
        let d = dir.path().to_str().unwrap();
        let mut args = vec!["figure", "pipessd", "--quick", "--blocks", "256", "--traces", t, "--out", d];
        args.extend(per_thread.map(|n| ["--requests-per-thread", n]).into_iter().flatten());
        let out = ok(&args);
        assert!(out.contains("published for PipeSSD: +31.2%"), "{out}");
        let cells: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("figure.json")).unwrap()).unwrap();
        let iops = |w: &str, arch: &str| {
            cells.as_array().unwrap().iter().find(|c| c["workload"] == w && c["arch"] == arch).unwrap()["iops"]
                .as_f64()
                .unwrap()
        };
        ["WebSearch", "TPC-C", "MSR hm_0", "Financial-like"]
            .into_iter()
            .map(|w| (w.to_string(), iops(w, "PipeSSD") / iops(w, "Tradition-4")))
            .collect()
    };
    for (w, r) in ratios(Some("1")) {
        assert!(r > 1.1, "{w}: PipeSSD / Tradition-4 = {r:.3} at one request per thread");
    }
    for (w, r) in ratios(None) {
        assert!((0.97..1.03).contains(&r), "{w}: PipeSSD / Tradition-4 = {r:.3} at the preset's 64");
    }
}

/// Issue 32, on the paper's own platform (`pipessd-paper`): with the paper's full-function
/// threads (one request each) PipeSSD is ahead of Tradition-4 closed loop on every workload;
/// open loop, at half the saturation rate both deliver what is offered (the gain needs a
/// device kept busy), and offered more than either completes, PipeSSD completes more. The
/// figure prints where the published gain appears beside it.
#[test]
fn on_the_paper_platform_pipessd_wins_with_full_function_threads_once_the_device_is_saturated() {
    let Some(traces) = shared_traces() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (t, d) = (traces.to_str().unwrap(), dir.path().to_str().unwrap());
    let out = ok(&[
        &PAPER_QUICK[..],
        &["--requests-per-thread", "1", "--open-loop", "50,150", "--traces", t, "--out", d],
    ]
    .concat());
    assert!(out.contains("pipessd-paper device"), "{out}");
    assert!(out.contains("where it appears: Tradition threads holding 1-2 requests each"), "{out}");
    let read = |name: &str| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap().as_array().unwrap().clone()
    };
    let closed = read("figure.json");
    let iops = |cells: &[serde_json::Value], w: &str, arch: &str, pct: Option<u64>| {
        let c = cells
            .iter()
            .find(|c| c["workload"] == w && c["arch"] == arch && pct.is_none_or(|p| c["offered_pct"] == p))
            .unwrap_or_else(|| panic!("no {arch} cell for {w} at {pct:?}"));
        (c["iops"].as_f64().unwrap(), c["offered_iops"].as_f64().unwrap())
    };
    for w in ["WebSearch", "TPC-C", "MSR hm_0", "Financial-like"] {
        let r = iops(&closed, w, "PipeSSD", None).0 / iops(&closed, w, "Tradition-4", None).0;
        assert!(r > 1.1, "{w}: PipeSSD / Tradition-4 = {r:.3} closed loop at one request per thread");
    }
    let open = read("open-loop.json");
    for w in ["WebSearch", "TPC-C", "MSR hm_0"] {
        for arch in ["PipeSSD", "Tradition-4"] {
            let (done, offered) = iops(&open, w, arch, Some(50));
            assert!(
                (done / offered - 1.0).abs() < 0.03,
                "{w} {arch}: {done:.0} of {offered:.0} offered at 50%"
            );
        }
        let r = iops(&open, w, "PipeSSD", Some(150)).0 / iops(&open, w, "Tradition-4", Some(150)).0;
        assert!(r > 1.05, "{w}: PipeSSD / Tradition-4 = {r:.3} offered 150% of saturation");
    }
}

/// `figure pipessd --warm-up S`: the Financial-like job runs S seconds unmeasured, then is
/// measured for 2 s (docs/architectures.md, "The Financial-like row's start"). A command count
/// would end it inside the warm-up and measure nothing: every design's cell has throughput.
#[test]
fn the_pipessd_figure_measures_the_financial_like_job_after_its_warm_up() {
    let Some(traces) = shared_traces() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (t, d) = (traces.to_str().unwrap(), dir.path().to_str().unwrap());
    let args = [&PAPER_QUICK[..], &["--traces", t, "--out", d]].concat();
    let out = ok(&[&args[..], &["--warm-up", "0.5"]].concat());
    assert!(out.contains("Financial-like job: 0.5 s of warm-up, then 2 s measured"), "{out}");
    let cells: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("figure.json")).unwrap()).unwrap();
    let financial: Vec<_> =
        cells.as_array().unwrap().iter().filter(|c| c["workload"] == "Financial-like").collect();
    assert_eq!(financial.len(), 4, "{cells}");
    for c in financial {
        assert!(c["iops"].as_f64().unwrap() > 1000.0, "{c}");
    }
    let bad = crate::ssdlab(&[&args[..], &["--warm-up=-2"]].concat());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("must be 0 or more seconds (got -2)"), "{err}");
}
