//! Systems of every kind ready to run: one SSD, a bridge over several SSDs, or a raw flash
//! array under a host-side FTL, built from a configuration and brought to a starting state.

use bridge::BridgeSystem;
use firmware::config::{DeviceConfig, SystemConfig};
use firmware::platform::StoreChoice;
use firmware::system::System;
use host::replay::{ReplaySpec, replay};
use host::run::{Progress, RunOptions, run_jobs_with};
use host::workload::JobSpec;
use hostftl::HostFtlSystem;
use report::{Report, RunInfo, assemble};
use sim::trace::Trace;

use crate::{BeforeAgeing, Prepared, SimulateError, Start, describe, prepare_checked};

/// A built system.
pub enum Built {
    /// One SSD (with everything `ssdlab run` offers: preconditioning, snapshots).
    Ssd(Box<Prepared>),
    /// A bridge over several SSDs.
    Bridge(Box<BridgeSystem>),
    /// A raw flash array under a host-side FTL.
    HostFtl(Box<HostFtlSystem>),
}

/// A system in its starting state.
pub struct Rig {
    /// The system.
    pub built: Built,
    /// How the report describes the starting state.
    pub initial_state: String,
}

impl Rig {
    /// The system, as drivers and reports see it.
    pub fn system(&self) -> &dyn System {
        match &self.built {
            Built::Ssd(p) => &p.device,
            Built::Bridge(b) => &**b,
            Built::HostFtl(h) => &**h,
        }
    }
}

/// Builds the system `cfg` describes and brings it to `start`. Snapshots are for single SSDs;
/// a bridge preconditions each SSD behind it.
pub fn prepare_rig(
    cfg: &DeviceConfig,
    store: &StoreChoice,
    seed: u64,
    start: Start,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Rig, SimulateError> {
    prepare_rig_checked(cfg, store, seed, start, &mut |_| Ok(()), progress)
}

/// [`prepare_rig`], calling `before_ageing` with the built system before it is brought to
/// `start` (and failing with its error, if any).
pub fn prepare_rig_checked(
    cfg: &DeviceConfig,
    store: &StoreChoice,
    seed: u64,
    start: Start,
    before_ageing: &mut BeforeAgeing<'_>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Rig, SimulateError> {
    match &cfg.system {
        SystemConfig::Ssd => {
            let p = prepare_checked(cfg, store, seed, start, before_ageing, progress)?;
            let initial_state = p.initial_state.clone();
            Ok(Rig { built: Built::Ssd(Box::new(p)), initial_state })
        }
        SystemConfig::Bridge(_) => {
            let sys = BridgeSystem::build(cfg, store, seed)?;
            before_ageing(&sys)?;
            let initial_state = match start {
                Start::Fresh => "fresh".to_string(),
                Start::Precondition(kind) => {
                    let n = sys.drives.len() as u64;
                    for (k, d) in sys.drives.iter().enumerate() {
                        if d.ftl.mapped_units() != 0 {
                            return Err(SimulateError::NotFresh);
                        }
                        d.ftl.precondition(kind, &mut |done, total| {
                            progress(k as u64 * total + done, n * total)
                        })?;
                    }
                    format!("{} of every drive (fast path)", describe(kind))
                }
                Start::Snapshot { .. } => {
                    return Err(SimulateError::Saved(
                        "snapshots hold one SSD; a bridge starts fresh or preconditioned".into(),
                    ));
                }
            };
            Ok(Rig { built: Built::Bridge(Box::new(sys)), initial_state })
        }
        SystemConfig::HostFtl(_) => {
            let initial_state = match start {
                Start::Fresh => "fresh".to_string(),
                _ => {
                    return Err(SimulateError::Start(
                        "a host-side FTL starts fresh (--precondition none); age it with a simulated workload".into(),
                    ));
                }
            };
            let sys = HostFtlSystem::build(cfg, store, seed).map_err(|e| match e {
                hostftl::BuildError::Image(e) => SimulateError::Image(e),
                hostftl::BuildError::Mount(m) => SimulateError::Saved(m.to_string()),
            })?;
            before_ageing(&sys)?;
            Ok(Rig { built: Built::HostFtl(Box::new(sys)), initial_state })
        }
    }
}

/// Runs `jobs` on `sys` (in its starting state, described by `initial_state`) and returns the
/// report and the event trace, if `opts` asked for one.
pub fn measure_system(
    sys: &dyn System,
    initial_state: &str,
    jobs: &[JobSpec],
    seed: u64,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Report, Option<Trace>), SimulateError> {
    let started = std::time::Instant::now();
    let mut host = run_jobs_with(sys, jobs, seed, opts, progress)?;
    let trace = host.trace.take();
    let info = RunInfo {
        seed,
        jobs: jobs.to_vec(),
        initial_state: initial_state.to_string(),
        wall: started.elapsed(),
    };
    Ok((assemble(sys, &host, &info), trace))
}

/// Replays a trace on `sys` and returns the report and the event trace, if `opts` asked for one.
pub fn replay_system(
    sys: &dyn System,
    initial_state: &str,
    spec: &ReplaySpec,
    seed: u64,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Report, Option<Trace>), SimulateError> {
    let started = std::time::Instant::now();
    let mut host = replay(sys, spec, opts, progress)?;
    let trace = host.trace.take();
    let info =
        RunInfo { seed, jobs: Vec::new(), initial_state: initial_state.to_string(), wall: started.elapsed() };
    Ok((assemble(sys, &host, &info), trace))
}
