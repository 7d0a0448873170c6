//! The `ssdlab` command as a library: what `ssdlab run` and `ssdlab age` do, callable from
//! tests and benchmarks.
//!
//! A run has two parts: [`prepare`] builds the device and brings it to its starting state
//! (fresh, preconditioned, or from a snapshot), then [`measure`] runs the jobs and assembles the
//! report. [`simulate`] does both for a fresh device.

use std::time::Instant;

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::ftl::Precondition;
use firmware::platform::StoreChoice;
use firmware::snapshot::{Snapshot, SnapshotError};
use host::run::{Progress, RunError, run_jobs};
use host::workload::JobSpec;
use report::{Report, RunInfo, assemble};

/// Where a run starts from.
pub enum Start {
    /// A factory-fresh device.
    Fresh,
    /// A fresh device aged by the fast preconditioner.
    Precondition(Precondition),
    /// A saved device; `label` (usually the file name) goes into the report.
    Snapshot {
        /// The loaded snapshot.
        snapshot: Box<Snapshot>,
        /// How the report names it.
        label: String,
    },
}

/// A device in its starting state.
pub struct Prepared {
    /// The device.
    pub device: Device,
    /// How the report describes the starting state.
    pub initial_state: String,
}

/// Builds the device and brings it to `start`. `progress(done, total)` reports preconditioning
/// progress in mapping units.
pub fn prepare(
    cfg: &DeviceConfig,
    store: &StoreChoice,
    seed: u64,
    start: Start,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Prepared, SimulateError> {
    match start {
        Start::Fresh => {
            Ok(Prepared { device: Device::build(cfg, store, seed)?, initial_state: "fresh".into() })
        }
        Start::Precondition(kind) => {
            let device = Device::build(cfg, store, seed)?;
            if device.ftl.mapped_units() != 0 {
                return Err(SimulateError::NotFresh);
            }
            device.ftl.precondition(kind, progress);
            Ok(Prepared { device, initial_state: format!("{} (fast path)", describe(kind)) })
        }
        Start::Snapshot { snapshot, label } => {
            if *store != StoreChoice::Metadata {
                return Err(SimulateError::Mount(
                    "snapshots hold metadata only: run them with --store metadata".into(),
                ));
            }
            let aged = snapshot.info.aged.clone();
            let (device, _) = snapshot.into_device(cfg, seed).map_err(SimulateError::Mount)?;
            Ok(Prepared { device, initial_state: format!("snapshot {label} ({aged})") })
        }
    }
}

/// Runs `jobs` on a prepared device and returns the report. `progress` is called every few
/// milliseconds of simulated time.
pub fn measure(
    p: &Prepared,
    jobs: &[JobSpec],
    seed: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, SimulateError> {
    let started = Instant::now();
    let host = run_jobs(&p.device, jobs, seed, progress)?;
    let info = RunInfo {
        seed,
        jobs: jobs.to_vec(),
        initial_state: p.initial_state.clone(),
        wall: started.elapsed(),
    };
    Ok(assemble(&p.device, &host, &info))
}

/// Builds a fresh device, runs `jobs` on it and returns the report.
pub fn simulate(
    cfg: &DeviceConfig,
    jobs: &[JobSpec],
    seed: u64,
    store: &StoreChoice,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, SimulateError> {
    let p = prepare(cfg, store, seed, Start::Fresh, &mut |_, _| {})?;
    measure(&p, jobs, seed, progress)
}

/// How a preconditioning is named in reports and snapshots.
pub fn describe(kind: Precondition) -> String {
    match kind {
        Precondition::SeqFill => "seq-fill".into(),
        Precondition::RandomFill => "random-fill".into(),
        Precondition::SteadyState { overwrites } => format!("steady-state:{overwrites}"),
    }
}

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    /// The NAND image could not be created or opened.
    #[error(transparent)]
    Image(#[from] nand::store::ImageError),
    /// The jobs or the device failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A snapshot could not be read, saved or used.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The saved state does not fit the device.
    #[error("cannot start from the saved state: {0}")]
    Mount(String),
    /// Preconditioning needs a fresh device.
    #[error("--precondition needs a fresh device, but the NAND image already holds data")]
    NotFresh,
}
