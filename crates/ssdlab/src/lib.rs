//! The `ssdlab` command as a library: what `ssdlab run` does, callable from tests and
//! benchmarks.

use std::time::Instant;

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::platform::StoreChoice;
use host::run::{Progress, RunError, run_jobs};
use host::workload::JobSpec;
use report::{Report, RunInfo, assemble};

/// Builds the device, runs `jobs` on it and returns the report. `progress` is called every
/// few milliseconds of simulated time.
pub fn simulate(
    cfg: &DeviceConfig,
    jobs: &[JobSpec],
    seed: u64,
    store: &StoreChoice,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, SimulateError> {
    let dev = Device::build(cfg, store, seed)?;
    let started = Instant::now();
    let host = run_jobs(&dev, jobs, seed, progress)?;
    let info = RunInfo { seed, jobs: jobs.to_vec(), wall: started.elapsed() };
    Ok(assemble(&dev, &host, &info))
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
}
