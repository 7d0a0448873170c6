//! The `ssdlab` command as a library: what `ssdlab run` and `ssdlab age` do, callable from
//! tests and benchmarks.
//!
//! ```text
//!   ssdlab (bin: cli, commands) ──▶ this library ──▶ a system: an SSD (HIL -> FTL -> FIL -> NAND),
//!                                                    a bridge over SSDs, a host-side FTL
//! ```
//!
//! The binary shares `src/` with it (its modules are listed in `main.rs`); the library's are
//! declared here: [`setup`] (what a run is made of), the systems of every kind built and
//! measured (`rig`, re-exported below), [`serve`] (the device over NBD), [`sweep`] and
//! [`perfetto`].
//!
//! A run has two parts: [`prepare`] builds the device and brings it to its starting state
//! (fresh, preconditioned, or from a snapshot), then [`measure`] runs the jobs and assembles the
//! report. [`simulate`] does both for a fresh device.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::ftl::Precondition;
use firmware::platform::StoreChoice;
use firmware::snapshot::{Snapshot, SnapshotError};
use firmware::system::System;
use host::replay::ReplaySpec;
use host::run::{Progress, RequestRecord, RequestSink, RunError, RunOptions};
use host::workload::JobSpec;
use report::Report;
use sim::trace::Trace;

pub mod calibrate;
pub mod gc_theory;
pub mod message;
pub mod perfetto;
pub mod pts;
mod rig;
pub mod serve;
pub mod setup;
pub mod sweep;

pub use rig::{Built, Rig, measure_system, prepare_rig, prepare_rig_checked, replay_system};

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

/// What [`prepare_checked`] and [`prepare_rig_checked`] call once the system is built and
/// before they age it: the place to check what will run on it (a workload it cannot run fails
/// at once, not after minutes of preconditioning) and to say what is about to happen.
pub type BeforeAgeing<'a> = dyn FnMut(&dyn System) -> Result<(), SimulateError> + 'a;

/// Builds the device and brings it to `start`. `progress(done, total)` reports preconditioning
/// progress in mapping units.
pub fn prepare(
    cfg: &DeviceConfig,
    store: &StoreChoice,
    seed: u64,
    start: Start,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Prepared, SimulateError> {
    prepare_checked(cfg, store, seed, start, &mut |_| Ok(()), progress)
}

/// [`prepare`], calling `before_ageing` with the built device before it is brought to `start`
/// (and failing with its error, if any).
pub fn prepare_checked(
    cfg: &DeviceConfig,
    store: &StoreChoice,
    seed: u64,
    start: Start,
    before_ageing: &mut BeforeAgeing<'_>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Prepared, SimulateError> {
    match start {
        Start::Fresh => {
            let device = Device::build(cfg, store, seed)?;
            before_ageing(&device)?;
            Ok(Prepared { device, initial_state: "fresh".into() })
        }
        Start::Precondition(kind) => {
            let device = Device::build(cfg, store, seed)?;
            if device.ftl.mapped_units() != 0 {
                return Err(SimulateError::NotFresh);
            }
            before_ageing(&device)?;
            device.ftl.precondition(kind, progress)?;
            Ok(Prepared { device, initial_state: format!("{} (fast path)", describe(kind)) })
        }
        Start::Snapshot { snapshot, label } => {
            if *store != StoreChoice::Metadata {
                return Err(SimulateError::Saved(
                    "snapshots hold metadata only: run them with --store metadata".into(),
                ));
            }
            let aged = snapshot.info.aged.clone();
            let (device, _) = snapshot.into_device(cfg, seed)?;
            before_ageing(&device)?;
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
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, SimulateError> {
    Ok(measure_traced(p, jobs, seed, opts, progress)?.0)
}

/// [`measure`], also returning the event trace if `opts` asked for one.
pub fn measure_traced(
    p: &Prepared,
    jobs: &[JobSpec],
    seed: u64,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Report, Option<Trace>), SimulateError> {
    measure_system(&p.device, &p.initial_state, jobs, seed, opts, progress)
}

/// Replays a trace on a prepared device and returns the report and the event trace, if
/// `opts` asked for one.
pub fn measure_replay(
    p: &Prepared,
    spec: &ReplaySpec,
    seed: u64,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Report, Option<Trace>), SimulateError> {
    replay_system(&p.device, &p.initial_state, spec, seed, opts, progress)
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
    measure(&p, jobs, seed, &RunOptions::default(), progress)
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
    /// The device could not be built from its NAND image.
    #[error(transparent)]
    Device(#[from] firmware::device::DeviceError),
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
    Mount(#[from] firmware::ftl::MountError),
    /// The saved state cannot be used this way, or a host-side FTL's image does not mount.
    #[error("cannot start from the saved state: {0}")]
    Saved(String),
    /// The system cannot start that way (a host-side FTL has no fast ageing).
    #[error("{0}")]
    Start(String),
    /// Preconditioning needs a fresh device.
    #[error("--precondition needs a fresh device, but the NAND image already holds data")]
    NotFresh,
    /// The fast preconditioner could not age the device.
    #[error("preconditioning failed: {0}")]
    Precondition(#[from] firmware::ftl::PreconditionError),
}

/// Writes one CSV line per completed command (`--per-request FILE`): identity, times and every
/// phase in nanoseconds. Keeps the first write error for [`CsvRequests::finish`].
pub struct CsvRequests {
    out: BufWriter<File>,
    error: Option<io::Error>,
}

impl CsvRequests {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path) -> io::Result<CsvRequests> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let phases: Vec<&str> =
            firmware::trace::Phases::default().entries().iter().map(|(n, _)| *n).collect();
        writeln!(
            out,
            "id,clone,qid,op,offset,bytes,submitted_ns,completed_ns,latency_ns,ok,{}",
            phases.iter().map(|p| format!("{p}_ns")).collect::<Vec<_>>().join(",")
        )?;
        Ok(CsvRequests { out, error: None })
    }

    /// Flushes the file; the first error met while writing, if any.
    pub fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

impl RequestSink for CsvRequests {
    fn record(&mut self, r: &RequestRecord) {
        if self.error.is_some() {
            return;
        }
        let mut line = format!(
            "{},{},{},{},{},{},{},{},{},{}",
            r.id,
            r.clone,
            r.qid,
            r.op.name(),
            r.offset,
            r.len,
            r.submitted.as_nanos(),
            r.completed.as_nanos(),
            r.completed.saturating_since(r.submitted).as_nanos(),
            r.ok as u8
        );
        for (_, d) in r.phases.entries() {
            line.push(',');
            line.push_str(&d.as_nanos().to_string());
        }
        line.push('\n');
        if let Err(e) = self.out.write_all(line.as_bytes()) {
            self.error = Some(e);
        }
    }
}
