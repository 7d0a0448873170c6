//! `ssdlab run`: simulate a device under fio-like jobs.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use anyhow::{Context, Result, bail};
use firmware::config::DeviceConfig;
use firmware::platform::StoreChoice;
use firmware::snapshot::{Snapshot, check_config};
use firmware::system::System;
use host::replay::ReplaySpec;
use host::run::{RequestSink, RunOptions};
use host::workload::JobSpec;
use sim::trace::{Trace, TraceWindow};
use sim::{SimDuration, SimTime};
use ssdlab::setup::{JobOption, Setting, WorkloadSpec, apply_settings};
use ssdlab::{CsvRequests, Start};

use crate::cli::{Ageing, CommonArgs, DEFAULT_AGEING, JobArgs, OutputArgs, RunArgs, ShapeArgs, StartArgs};
use crate::progress::Progress;
use crate::{named_device, output_paths};

/// What a run drives the device with.
pub(crate) enum Workload {
    /// fio-like jobs.
    Jobs {
        /// The jobs.
        jobs: Vec<JobSpec>,
        /// Whether they are the default job, untouched (whose 8 GiB region is cut to a smaller
        /// device); else a size larger than the device is an error.
        default: bool,
    },
    /// A block trace.
    Trace(Box<ReplaySpec>),
}

impl Workload {
    /// Fails if the workload cannot run on `sys` (checked before the device is aged), and
    /// registers where a fill places confined jobs' data; returns the lines to print before it
    /// runs (a trace's volume layout, its warnings).
    pub(crate) fn check(&self, sys: &dyn System) -> Result<Vec<String>, ssdlab::SimulateError> {
        match self {
            Workload::Jobs { jobs, default } => {
                host::run::check(sys, jobs)?;
                host::run::confine_fill(sys, jobs)?;
                let front = sys.front();
                let capacity = front.capacity_lbas() * front.lba_bytes() as u64;
                for job in jobs.iter().filter(|_| !default) {
                    job.check_size(capacity).map_err(host::run::RunError::Job)?;
                }
            }
            Workload::Trace(spec) => {
                let plan = host::replay::check(sys, spec)?;
                return Ok(plan.lines(12));
            }
        }
        Ok(Vec::new())
    }
}

pub fn run(a: RunArgs) -> Result<()> {
    let workload = match &a.trace {
        Some(path) => Workload::Trace(Box::new(super::replay::spec(path, &a.replay)?)),
        None => Workload::Jobs { jobs: jobs(&a.jobs)?, default: !any_job_flag(&a.jobs) },
    };
    execute(a.device.as_deref(), &a.start, a.ftl_bypass, a.alone, &workload, &a.output, &a.common)
}

/// Builds the device in its starting state, runs the workload, writes and prints the report;
/// with `alone`, also runs each job by itself on the same starting state (`--alone`).
pub(crate) fn execute(
    device: Option<&str>,
    start_args: &StartArgs,
    ftl_bypass: bool,
    alone: bool,
    workload: &Workload,
    output: &OutputArgs,
    common: &CommonArgs,
) -> Result<()> {
    check_output(output, common)?;
    let store = named_device::store(common)?;
    let alone = match workload {
        _ if !alone => None,
        Workload::Trace(spec) if spec.volume_flows.is_none() => {
            bail!("--alone replays each volume flow by itself: add --volume-flows (this replay is one flow)")
        }
        _ if matches!(store, StoreChoice::Image { .. }) => {
            bail!("--alone rebuilds the device once per flow: use --store metadata or memory, not an image")
        }
        Workload::Trace(_) => Some(None),
        Workload::Jobs { jobs, .. } if jobs.len() < 2 => {
            bail!("--alone needs two or more jobs (a job file with several sections); this run has one")
        }
        Workload::Jobs { jobs, default } => Some(Some((jobs, *default))),
    };
    let (mut cfg, start, note) = starting(device, start_args)?;
    cfg.ftl.bypass |= ftl_bypass;
    let scanned;
    let (warnings, workload) = match workload {
        Workload::Trace(spec) => {
            let (warnings, volumes) = super::replay::prescan(spec)?;
            let mut spec = spec.clone();
            spec.scanned = Some(volumes);
            scanned = Workload::Trace(spec);
            (warnings, &scanned)
        }
        Workload::Jobs { .. } => (Vec::new(), workload),
    };
    let rig = prepare(&cfg, &store, common.seed, start, &mut |sys| {
        let layout = workload.check(sys)?;
        for line in warnings.iter().chain(&note).chain(&layout) {
            eprintln!("{line}");
        }
        Ok(())
    })?;
    let mut report = measure(rig.system(), &rig.initial_state, workload, common.seed, output)?;
    drop(rig);
    // A flow by itself has the whole data cache and CMT: there is no other flow to split them
    // with.
    let mut solo_cfg = cfg.clone();
    solo_cfg.ftl.cache.partition = Default::default();
    if let firmware::ftl::MappingConfig::Dftl { partition, .. } = &mut solo_cfg.ftl.mapping {
        *partition = Default::default();
    }
    if let (Some(None), Workload::Trace(spec)) = (alone, workload) {
        let flows = report.flows.len();
        for f in 0..flows {
            eprintln!(
                "alone: flow {} ({} of {flows}) by itself on the same starting state",
                report.flows[f].name,
                f + 1
            );
            let (_, start, _) = starting(device, start_args)?;
            let rig = prepare(&solo_cfg, &store, common.seed, start, &mut |_| Ok(()))?;
            let solo = Workload::Trace(Box::new(host::replay::ReplaySpec {
                only_flow: Some(f as u32),
                ..(**spec).clone()
            }));
            let quiet = OutputArgs {
                interval: output.interval,
                interface: output.interface,
                ..OutputArgs::default()
            };
            let r = measure(rig.system(), &rig.initial_state, &solo, common.seed, &quiet)?;
            report::set_alone(&mut report, f, report::mean_latency_ns(&r.ops));
        }
    }
    if let Some(Some((jobs, default))) = alone {
        for (j, job) in jobs.iter().enumerate() {
            eprintln!(
                "alone: job {} ({} of {}) by itself on the same starting state",
                job.name,
                j + 1,
                jobs.len()
            );
            let (_, start, _) = starting(device, start_args)?;
            // The same starting state: the fill places every confined job's data as before.
            let rig = prepare(&solo_cfg, &store, common.seed, start, &mut |sys| {
                Ok(host::run::confine_fill(sys, jobs)?)
            })?;
            // The job's own stream: the seed it had as job j of the shared run.
            let mut job = job.clone();
            job.randseed = Some(job.randseed.unwrap_or(host::workload::job_seed(common.seed, j)));
            let solo = Workload::Jobs { jobs: vec![job], default };
            let quiet = OutputArgs {
                interval: output.interval,
                interface: output.interface,
                ..OutputArgs::default()
            };
            let r = measure(rig.system(), &rig.initial_state, &solo, common.seed, &quiet)?;
            report::set_alone(&mut report, j, report::mean_latency_ns(&r.ops));
        }
    }
    if let Some(path) = &common.json {
        super::write_json(path, &report)?;
    }
    if let Some(dir) = &output.plot {
        eprintln!("{}", super::plot::write(&report, dir)?);
    }
    println!("{}", report::summary(&report));
    if output.breakdown {
        print!("\n{}", report::breakdown(&report));
    }
    Ok(())
}

/// The configuration and starting state `start` asks for, and what to say before ageing.
fn starting(device: Option<&str>, start: &StartArgs) -> Result<(DeviceConfig, Start, Option<String>)> {
    if let Some(path) = &start.state {
        let (cfg, start) = from_snapshot(path, device, start.allow_config_change, &start.shape.set)?;
        return Ok((cfg, start, None));
    }
    let cfg = shaped(device, &start.shape)?;
    let (start, note) = match start.precondition {
        Some(Ageing::None) => (Start::Fresh, None),
        Some(Ageing::Fast(kind)) => (Start::Precondition(kind), None),
        None if cfg.ftl.zoned_ns().is_some() => {
            let note = format!(
                "{} starts with every zone empty (the host writes a zoned namespace's zones; --precondition does not apply)",
                cfg.name
            );
            (Start::Fresh, Some(note))
        }
        None if cfg.system.kind() == "host-ftl" => {
            let note = format!(
                "{} starts fresh (a host-side FTL has no fast ageing; --precondition none)",
                cfg.name
            );
            (Start::Fresh, Some(note))
        }
        None => {
            let note = format!(
                "ageing {} to GC steady state first ({}: a random fill, then random overwrites of twice its \
                 capacity, untimed); --precondition none starts from a fresh device",
                cfg.name,
                ssdlab::describe(DEFAULT_AGEING)
            );
            (Start::Precondition(DEFAULT_AGEING), Some(note))
        }
    };
    Ok((cfg, start, note))
}

/// Fails on output options that cannot work, before anything runs: files that could not be
/// written, a zero interval, an empty trace window.
fn check_output(out: &OutputArgs, common: &CommonArgs) -> Result<()> {
    let files = [
        ("--json", &common.json),
        ("--per-request", &out.per_request),
        ("--trace-events", &out.trace_events),
    ];
    for (flag, path) in files {
        if let Some(path) = path {
            output_paths::file(flag, path)?;
        }
    }
    if let Some(dir) = &out.plot {
        output_paths::dir("--plot", dir)?;
    }
    if out.interval.is_zero() {
        bail!("--interval must be above zero");
    }
    if let Some(until) = out.trace_until
        && until <= out.trace_from.unwrap_or(SimDuration::ZERO)
    {
        bail!("--trace-until must be after --trace-from");
    }
    Ok(())
}

/// Runs the workload with a progress bar and the outputs asked for.
pub(crate) fn measure(
    sys: &dyn System,
    initial_state: &str,
    workload: &Workload,
    seed: u64,
    out: &OutputArgs,
) -> Result<report::Report> {
    let csv = match &out.per_request {
        Some(path) => Some(Rc::new(RefCell::new(
            CsvRequests::create(path).with_context(|| format!("creating {}", path.display()))?,
        ))),
        None => None,
    };
    let trace = out.trace_events.as_ref().map(|_| {
        let at = |d: Option<SimDuration>| d.map(|d| SimTime::ZERO + d);
        TraceWindow {
            from: at(out.trace_from).unwrap_or(SimTime::ZERO),
            until: at(out.trace_until).unwrap_or(SimTime::MAX),
            max_requests: out.trace_requests,
            ..TraceWindow::default()
        }
    });
    let opts = RunOptions {
        interval: out.interval,
        per_request: csv.clone().map(|c| c as Rc<RefCell<dyn RequestSink>>),
        trace,
        interface: out.interface,
        ..RunOptions::default()
    };
    let mut bar = Progress::new("commands");
    let mut progress = |p: host::run::Progress| {
        if let Some(total) = p.total {
            bar.update(p.done, total);
        }
    };
    let (report, events) = match workload {
        Workload::Jobs { jobs, .. } => {
            ssdlab::measure_system(sys, initial_state, jobs, seed, &opts, &mut progress)?
        }
        Workload::Trace(spec) => ssdlab::replay_system(sys, initial_state, spec, seed, &opts, &mut progress)?,
    };
    bar.finish();
    if let (Some(csv), Some(path)) = (csv, &out.per_request) {
        csv.borrow_mut().finish().with_context(|| format!("writing {}", path.display()))?;
    }
    if let (Some(events), Some(path)) = (events, &out.trace_events) {
        write_trace(&events, sys.config(), path)?;
    }
    Ok(report)
}

/// Writes the event trace and says what it holds.
fn write_trace(events: &Trace, cfg: &DeviceConfig, path: &Path) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    ssdlab::perfetto::write(events, cfg, &mut w)
        .and_then(|()| std::io::Write::flush(&mut w))
        .with_context(|| format!("writing {}", path.display()))?;
    let dropped = if events.dropped > 0 {
        format!(" ({} more dropped: span budget)", events.dropped)
    } else {
        String::new()
    };
    eprintln!(
        "trace: {} spans of {} requests{dropped} in {} (open in https://ui.perfetto.dev)",
        events.spans.len(),
        events.requests,
        path.display()
    );
    Ok(())
}

/// Builds the system in its starting state, with a progress bar while it ages; `before_ageing`
/// checks the built system first (see [`ssdlab::BeforeAgeing`]).
pub(crate) fn prepare(
    cfg: &DeviceConfig,
    store: &StoreChoice,
    seed: u64,
    start: Start,
    before_ageing: &mut ssdlab::BeforeAgeing<'_>,
) -> Result<ssdlab::Rig> {
    let mut bar = Progress::new("units aged");
    let rig = ssdlab::prepare_rig_checked(cfg, store, seed, start, before_ageing, &mut |done, total| {
        bar.update(done, total)
    })?;
    bar.finish();
    Ok(rig)
}

/// The configuration and start for `--state`: the snapshot's own configuration, or the named
/// device's if it matches.
fn from_snapshot(
    path: &Path,
    device: Option<&str>,
    relaxed: bool,
    sets: &[String],
) -> Result<(DeviceConfig, Start)> {
    let snapshot = Snapshot::load(path)?;
    let named = match device {
        None => None,
        Some(name) => Some(named_device::load(Some(name))?),
    };
    let cfg = match (named, sets.is_empty()) {
        (None, true) => snapshot.info.config.clone(),
        (named, _) => {
            let cfg = settings(named.unwrap_or_else(|| snapshot.info.config.clone()), sets)?;
            for note in check_config(&snapshot.info.config, &cfg, relaxed || device.is_none())? {
                eprintln!("note: {note}");
            }
            cfg
        }
    };
    let label = path.display().to_string();
    Ok((cfg, Start::Snapshot { snapshot: Box::new(snapshot), label }))
}

/// `cfg` with the `--set` changes applied.
/// The named device (a preset or a TOML file, default softssd) with `--blocks`, then each
/// `--set`, applied.
pub(crate) fn shaped(device: Option<&str>, shape: &ShapeArgs) -> Result<DeviceConfig> {
    let mut cfg = named_device::load(device)?;
    if let Some(blocks) = shape.blocks {
        named_device::set_blocks(&mut cfg, blocks)?;
    }
    settings(cfg, &shape.set)
}

pub(crate) fn settings(cfg: DeviceConfig, set: &[String]) -> Result<DeviceConfig> {
    let settings = set.iter().map(|s| s.parse::<Setting>().context("--set")).collect::<Result<Vec<_>>>()?;
    apply_settings(&cfg, &settings).context("--set")
}

/// The jobs from a job file, or from the flags on top of the defaults; `--fio` options after
/// the flags (in every job of a job file).
pub(crate) fn jobs(a: &JobArgs) -> Result<Vec<JobSpec>> {
    let mut options: Vec<JobOption> = flags(a)
        .into_iter()
        .filter_map(|(k, v)| {
            let label = format!("--{}", k.replace('_', "-"));
            v.clone().map(|v| JobOption { key: k.to_string(), value: Some(v), label })
        })
        .collect();
    if a.time_based {
        options.push(JobOption { key: "time_based".into(), value: None, label: "--time-based".into() });
    }
    for kv in &a.fio {
        let (k, v) = match kv.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (kv.as_str(), None),
        };
        options.push(JobOption { key: k.to_string(), value: v, label: format!("--fio {kv}") });
    }
    Ok(WorkloadSpec { job_file: a.job_file.clone(), options }.jobs()?)
}

/// The workload flags, by fio option name.
fn flags(a: &JobArgs) -> [(&'static str, &Option<String>); 14] {
    [
        ("rw", &a.rw),
        ("bs", &a.bs),
        ("bssplit", &a.bssplit),
        ("iodepth", &a.iodepth),
        ("numjobs", &a.numjobs),
        ("rwmixread", &a.rwmixread),
        ("size", &a.size),
        ("offset", &a.offset),
        ("random_distribution", &a.random_distribution),
        ("number_ios", &a.number_ios),
        ("runtime", &a.runtime),
        ("ramp_time", &a.ramp_time),
        ("rate_iops", &a.rate_iops),
        ("rate", &a.rate),
    ]
}

/// Whether any workload flag (or a job file) was given.
pub(crate) fn any_job_flag(a: &JobArgs) -> bool {
    a.job_file.is_some() || flags(a).iter().any(|(_, v)| v.is_some()) || a.time_based || !a.fio.is_empty()
}
