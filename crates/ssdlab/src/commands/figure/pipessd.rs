//! `ssdlab figure pipessd`: the PipeSSD paper's comparison (PRESETS.md, "Preset pipessd").
//!
//! Four firmware designs on the same aged device — PipeSSD, DeepFlash, Tradition-4 and
//! Tradition-8 — for each setup (4 channels, 8 channels, 4 channels with half the data cache)
//! and workload (three shared traces replayed closed loop, and a Financial-like job): IOPS
//! against Tradition-4, data cache hit ratios, and how much of Tradition-4's tail latency is
//! spent on locks, with Tradition-4's lock-wait share and channel utilisation beside each row.
//! Every figure sits beside what the paper published.
//!
//! The device is a preset (`--preset`, default `pipessd`; `pipessd-paper` is the paper's
//! platform as it states it). Its setups: the preset at 4 channels; at 8 channels (the preset's
//! `-8ch` sibling if there is one, else the preset with 8 channels); the 4-channel device with
//! half its data cache. With `--open-loop`, the traces are also replayed open loop, as the
//! paper's preloaded traces were, at percentages of the closed-loop saturation rate.

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::{Context, Result};
use firmware::config::DeviceConfig;
use host::replay::{ReplayMode, ReplaySpec};
use host::run::{RequestRecord, RequestSink, RunOptions};
use host::workload::JobSpec;
use serde::Serialize;

use super::{Aged, traces_dir};
use crate::cli::PipessdFigureArgs;

mod report;
pub use report::rows;
use report::{charts, open_table, table};

/// The Financial-like workload: Financial1 (UMass, an OLTP application at a bank) is mostly
/// writes (about 77%) of small requests (a few KiB) with strong locality; the trace is not
/// shared here, so a job with those properties stands in: 23% reads, 4 KiB, Zipf 0.9 over
/// 4 GiB. These describe the trace, not the paper's results.
const FINANCIAL: &str = "rw=randrw rwmixread=23 bs=4k random_distribution=zipf:0.9 size=4g numjobs=1";

/// Seconds the Financial-like job is measured for after a `--warm-up`.
const MEASURED_AFTER_WARM_UP: f64 = 2.0;

/// The Financial-like job's options ([`FINANCIAL`] at the figure's depth) and what the table
/// says of its length: a number of commands from the aged state (20,000 with `--quick`, else
/// 150,000), or with `--warm-up`, that long unmeasured and then [`MEASURED_AFTER_WARM_UP`]
/// seconds measured.
fn financial_options(a: &PipessdFigureArgs) -> (String, String) {
    let (length, said) = match (a.warm_up > 0.0, a.quick) {
        (true, _) => (
            format!("ramp_time={}s runtime={MEASURED_AFTER_WARM_UP}s time_based=1", a.warm_up),
            format!("{} s of warm-up, then {MEASURED_AFTER_WARM_UP} s measured", a.warm_up),
        ),
        (false, true) => {
            ("number_ios=20000".into(), "20,000 commands from the aged state (no warm-up)".into())
        }
        (false, false) => (
            "number_ios=150000".into(),
            "150,000 commands from the aged state (no warm-up: --warm-up)".into(),
        ),
    };
    (format!("{FINANCIAL} iodepth={} {length}", a.depth), said)
}

/// The designs compared, Tradition-4 (the baseline) first. Tradition-8 also gets eight cores
/// at the clock of the preset's first ([`eight_cores`]).
const ARCHS: [(&str, &[(&str, &str)]); 4] = [
    ("Tradition-4", &[("architecture.kind", "tradition"), ("architecture.cores", "4")]),
    ("PipeSSD", &[("architecture.kind", "pipessd")]),
    ("DeepFlash", &[("architecture.kind", "deepflash")]),
    ("Tradition-8", &[("architecture.kind", "tradition"), ("architecture.cores", "8")]),
];

/// The setups, with what the paper published for PipeSSD against Tradition-4 in each.
const SETUPS: [(&str, &str); 3] = [
    ("4 channels", "+31.2% on average (+36% WebSearch), +5% over DeepFlash"),
    ("8 channels", "about +40%, +5.2% over DeepFlash"),
    ("4 channels, half cache", "+42%"),
];

/// Where each setup's published gain appears in the maps of the parameters the paper leaves
/// open (docs/architectures.md, "Where PipeSSD wins" and "pipessd-paper"; the sweeps
/// examples/pipessd-threads.toml and examples/pipessd-paper-map.toml).
const REGIONS: [&str; 3] = [
    "where it appears: Tradition threads holding 1-2 requests each (--requests-per-thread); gone from 8",
    "where it appears: 2 requests per Tradition thread (1: more than twice as fast); firmware slow enough to saturate a stage flips it (pipessd-paper: 64x its costs)",
    "where it appears: nowhere mapped; halving the cache moves no gain (hit ratios stay ~1% on the traces)",
];

/// The trace workloads (the open-loop runs replay these).
const TRACES: [(&str, &str); 3] = [
    ("WebSearch", "websearch-sample.spc.gz"),
    ("TPC-C", "tpcc-sample.mqsim.trace.gz"),
    ("MSR hm_0", "msr-hm_0-sample.csv"),
];

/// One run's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    setup: String,
    workload: String,
    arch: String,
    iops: f64,
    cache_hit_ratio: f64,
    p99_latency_us: f64,
    /// Share of the latency of the slowest 1% of commands spent waiting for locks.
    lock_share_of_tail: f64,
    /// Share of every command's latency spent waiting for locks (the lock-wait share).
    lock_share: f64,
    /// Mean busy share of the flash channels.
    channel_busy: f64,
    /// Mean busy share of the dies.
    die_busy: f64,
    /// Mean latency, us.
    mean_latency_us: f64,
    /// Trace records per command issued (1 for a job; a record longer than the largest
    /// transfer becomes several commands).
    records_per_command: f64,
    /// Open loop: records offered per second (0 in closed loop).
    offered_iops: f64,
    /// Open loop: times the replay waited for room (more than its 1024 commands in flight).
    host_stalls: u64,
}

/// An open-loop run: a trace offered at a share of the closed-loop saturation rate.
#[derive(Clone, Debug, Serialize)]
pub struct OpenCell {
    /// The offered rate, % of the saturation rate (the most records per second any of the four
    /// designs completed closed loop on that setup and trace).
    offered_pct: u32,
    #[serde(flatten)]
    cell: Cell,
}

enum Load {
    Trace(ReplaySpec),
    Jobs(Vec<JobSpec>),
}

pub fn run(a: &PipessdFigureArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let cells = cells(a)?;
    let mut text = table(&cells, a);
    if !a.open_loop.is_empty() {
        let open = open_cells(a, &cells)?;
        text.push_str(&open_table(&open, a));
        super::super::write_json(&a.out.join("open-loop.json"), &open)?;
    }
    println!("{text}");
    std::fs::write(a.out.join("figure.txt"), &text)?;
    super::super::write_json(&a.out.join("figure.json"), &cells)?;
    for path in charts(&cells, a)? {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The device of `setup` (a name from [`SETUPS`]) on `preset`, at `blocks` per plane (0: the
/// preset's): 4 channels; 8 channels (the preset's `-8ch` sibling if it has one, else the
/// preset with 8 channels); or the 4-channel device with half its data cache.
pub fn setup_config(preset: &str, setup: &str, blocks: u32) -> Result<DeviceConfig> {
    let eight = format!("{preset}-8ch");
    let (name, channels) = match setup {
        "8 channels" if firmware::presets::text(&eight).is_some() => (eight.as_str(), None),
        "8 channels" => (preset, Some(8)),
        _ => (preset, Some(4)),
    };
    let mut cfg = crate::named_device::load(Some(name))?;
    crate::named_device::set_blocks(&mut cfg, blocks)?;
    if let Some(n) = channels.filter(|n| *n != cfg.geometry.channels) {
        cfg = apply(&cfg, &[("geometry.channels", &n.to_string())])?;
    }
    if setup == "4 channels, half cache" {
        let half = sim::ByteSize(cfg.ftl.cache.capacity.bytes() / 2);
        cfg = apply(&cfg, &[("ftl.cache.capacity", &format!("{}B", half.bytes()))])?;
    }
    Ok(cfg)
}

/// Eight cores at the clock of `cfg`'s first (Tradition-8's controller; the presets have four).
fn eight_cores(cfg: &DeviceConfig) -> String {
    let clock = cfg.controller.cores.first().map_or_else(|| "1.2GHz".to_string(), |c| c.clock.to_string());
    let cores: Vec<String> = (0..8).map(|i| format!("{{ name = 'c{i}', clock = '{clock}' }}")).collect();
    format!("[{}]", cores.join(", "))
}

/// `cfg` as design `arch` (a name from [`ARCHS`]), with `--requests-per-thread` on Tradition.
fn design(cfg: &DeviceConfig, arch: &str, a: &PipessdFigureArgs) -> Result<DeviceConfig> {
    let sets = ARCHS.iter().find(|(n, _)| *n == arch).map_or(&[][..], |(_, s)| s);
    let mut c = cfg.clone();
    if arch == "Tradition-8" {
        c = apply(&c, &[("controller.cores", &eight_cores(cfg))])?;
    }
    c = apply(&c, sets)?;
    if let (Some(n), true) = (a.requests_per_thread, arch.starts_with("Tradition")) {
        c = apply(&c, &[("architecture.workers_per_core", &n.to_string())])?;
    }
    Ok(c)
}

/// Runs every setup, workload and design (the first setup only with `--quick`).
pub fn cells(a: &PipessdFigureArgs) -> Result<Vec<Cell>> {
    let traces = traces_dir(a.traces.as_deref())?;
    let replay = |file: &str| {
        let mut spec = ReplaySpec::new(traces.join(file));
        spec.mode = ReplayMode::ClosedLoop { depth: a.depth };
        Load::Trace(spec)
    };
    let financial = job("financial-like", &financial_options(a).0)?;
    let mut loads: Vec<(&str, Load)> = TRACES.iter().map(|(w, f)| (*w, replay(f))).collect();
    loads.push(("Financial-like", Load::Jobs(vec![financial])));
    let mut cells = Vec::new();
    for (setup, _) in SETUPS.iter().take(if a.quick { 1 } else { SETUPS.len() }) {
        let cfg = setup_config(&a.preset, setup, a.blocks)?;
        eprintln!("{setup}: ageing {} to GC steady state", cfg.geometry.capacity());
        let aged = Aged::new(&cfg, a.seed)?;
        for (workload, load) in &loads {
            for (arch, _) in ARCHS {
                let c = design(&cfg, arch, a)?;
                let cell = measure(&aged, &c, load, a.seed)
                    .with_context(|| format!("{setup}, {workload}, {arch}"))?;
                eprintln!("  {workload:<15} {arch:<12} {:>10.0} IOPS", cell.iops);
                cells.push(Cell {
                    setup: setup.to_string(),
                    workload: workload.to_string(),
                    arch: arch.into(),
                    ..cell
                });
            }
        }
    }
    Ok(cells)
}

/// The open-loop runs: each trace of each setup `closed` has, offered to Tradition-4 and
/// PipeSSD at each `--open-loop` percentage of its saturation rate (the most records per
/// second any design completed closed loop).
pub fn open_cells(a: &PipessdFigureArgs, closed: &[Cell]) -> Result<Vec<OpenCell>> {
    let traces = traces_dir(a.traces.as_deref())?;
    let mut out = Vec::new();
    for (setup, _) in SETUPS {
        if !closed.iter().any(|c| c.setup == setup) {
            continue;
        }
        let cfg = setup_config(&a.preset, setup, a.blocks)?;
        eprintln!("{setup} (open loop): ageing {} to GC steady state", cfg.geometry.capacity());
        let aged = Aged::new(&cfg, a.seed)?;
        for (workload, file) in TRACES {
            let saturation = closed
                .iter()
                .filter(|c| c.setup == setup && c.workload == workload)
                .map(|c| c.iops * c.records_per_command)
                .fold(0.0, f64::max);
            for &pct in &a.open_loop {
                // Whole records per second, so that the rate prints as it is run.
                let iops = (saturation * f64::from(pct) / 100.0).round().max(1.0);
                let mut spec = ReplaySpec::new(traces.join(file));
                spec.mode = ReplayMode::Rate { iops };
                for arch in ["Tradition-4", "PipeSSD"] {
                    let c = design(&cfg, arch, a)?;
                    let cell = measure(&aged, &c, &Load::Trace(spec.clone()), a.seed)
                        .with_context(|| format!("{setup}, {workload}, {arch}, open loop at {iops} IOPS"))?;
                    eprintln!("  {workload:<15} {pct:>4}% {arch:<12} {:>10.0} IOPS", cell.iops);
                    out.push(OpenCell {
                        offered_pct: pct,
                        cell: Cell {
                            setup: setup.to_string(),
                            workload: workload.to_string(),
                            arch: arch.into(),
                            offered_iops: iops,
                            ..cell
                        },
                    });
                }
            }
        }
    }
    Ok(out)
}

/// A job from fio options written `key=value`, space separated.
fn job(name: &str, options: &str) -> Result<JobSpec> {
    let mut j = JobSpec::new(name);
    for kv in options.split_whitespace() {
        let (k, v) = kv.split_once('=').map_or((kv, None), |(k, v)| (k, Some(v)));
        j.set(k, v).with_context(|| format!("job option {kv}"))?;
    }
    Ok(j)
}

/// `cfg` with `sets` applied in order.
fn apply(cfg: &DeviceConfig, sets: &[(&str, &str)]) -> Result<DeviceConfig> {
    sets.iter().try_fold(cfg.clone(), |c, (k, v)| c.set(k, v).with_context(|| format!("--set {k}={v}")))
}

/// Collects each command's latency and lock time.
#[derive(Default)]
struct Tail(Vec<(u64, u64)>);

impl RequestSink for Tail {
    fn record(&mut self, r: &RequestRecord) {
        if r.ok {
            self.0.push((r.completed.since(r.submitted).as_nanos(), r.phases.lock.as_nanos()));
        }
    }
}

/// Runs `load` on the aged device under `cfg`.
fn measure(aged: &Aged, cfg: &DeviceConfig, load: &Load, seed: u64) -> Result<Cell> {
    let p = aged.device(cfg, seed)?;
    let tail = Rc::new(RefCell::new(Tail::default()));
    let opts = RunOptions {
        per_request: Some(tail.clone() as Rc<RefCell<dyn RequestSink>>),
        ..RunOptions::default()
    };
    let report = match load {
        Load::Trace(spec) => ssdlab::measure_replay(&p, spec, seed, &opts, &mut |_| {})?.0,
        Load::Jobs(jobs) => ssdlab::measure(&p, jobs, seed, &opts, &mut |_| {})?,
    };
    let mut t = std::mem::take(&mut tail.borrow_mut().0);
    t.sort_unstable();
    let sum = |v: &[(u64, u64)]| v.iter().fold((0u64, 0u64), |(l, k), &(a, b)| (l + a, k + b));
    let (lat, lock) = sum(&t[t.len() * 99 / 100..]);
    let (all_lat, all_lock) = sum(&t);
    let p99 = report.ops.values().map(|o| o.latency_ns.p99).max().unwrap_or(0);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (records_per_command, host_stalls) = report.replay.as_ref().map_or((1.0, 0), |r| {
        let replayed = r.records - r.skipped_flushes - r.skipped_zero_length - r.dropped;
        (replayed as f64 / r.commands.max(1) as f64, r.host_stalls)
    });
    Ok(Cell {
        setup: String::new(),
        workload: String::new(),
        arch: String::new(),
        iops: report.total.iops,
        cache_hit_ratio: report.cache.data.ratio,
        p99_latency_us: p99 as f64 / 1e3,
        lock_share_of_tail: lock as f64 / lat.max(1) as f64,
        lock_share: all_lock as f64 / all_lat.max(1) as f64,
        channel_busy: mean(&report.utilisation.channels),
        die_busy: mean(&report.utilisation.dies),
        mean_latency_us: all_lat as f64 / t.len().max(1) as f64 / 1e3,
        records_per_command,
        offered_iops: 0.0,
        host_stalls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use sim::SimDuration;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: PipessdFigureArgs,
    }

    fn args(extra: &[&str]) -> PipessdFigureArgs {
        Cli::parse_from(std::iter::once("figure").chain(extra.iter().copied())).a
    }

    #[test]
    fn the_financial_like_job_runs_a_command_count_or_a_warm_up_then_two_seconds() {
        let j = job("f", &financial_options(&args(&[])).0).unwrap();
        assert_eq!((j.number_ios, j.ramp_time, j.runtime), (Some(150_000), SimDuration::ZERO, None));
        let j = job("f", &financial_options(&args(&["--quick"])).0).unwrap();
        assert_eq!(j.number_ios, Some(20_000));
        // With a warm-up the run is timed: a command count would end it inside the warm-up
        // (150,000 commands take 2.5-3 s on pipessd-paper), and nothing would be measured.
        for extra in [&["--warm-up", "6"][..], &["--warm-up", "0.5", "--quick"]] {
            let a = args(extra);
            let j = job("f", &financial_options(&a).0).unwrap();
            assert_eq!(j.number_ios, None, "{extra:?}");
            assert_eq!(j.ramp_time, SimDuration::from_secs_f64(a.warm_up), "{extra:?}");
            assert_eq!(j.runtime, Some(SimDuration::from_secs_f64(MEASURED_AFTER_WARM_UP)), "{extra:?}");
            assert!(j.time_based, "{extra:?}");
            let said = financial_options(&a).1;
            assert_eq!(said, format!("{} s of warm-up, then 2 s measured", a.warm_up));
            assert_eq!((j.iodepth, j.rwmixread), (32, 23), "{extra:?}");
        }
    }

    #[test]
    fn a_negative_or_endless_warm_up_is_refused() {
        for bad in ["-1", "inf", "NaN", "soon"] {
            let err =
                Cli::try_parse_from(["figure", &format!("--warm-up={bad}")]).err().expect(bad).to_string();
            assert!(err.contains("seconds"), "{bad}: {err}");
        }
        assert_eq!(args(&["--warm-up", "0"]).warm_up, 0.0);
    }
}
