//! The worker's side of [`super::isolate`]: run the spec in one file, write the report to
//! another (`ssdlab sweep-worker`, and `python -m ssdlab._worker` in the Python package).

use std::path::{Path, PathBuf};

use crate::setup::{RunSpec, SpecError};

/// Why a worker could not run its spec.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The spec could not be read or the report not written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The spec is bad or the run failed.
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// Test hook of the failure-isolation tests: a worker whose spec has the seed this variable
/// names panics instead of running.
pub const PANIC_SEED_VAR: &str = "SSDLAB_TEST_PANIC_SEED";

/// Runs the spec in `spec` and writes its report, as `ssdlab run --json` would, to `report`.
pub fn run_worker(spec: &Path, report: &Path) -> Result<(), WorkerError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WorkerError::Io { path, source }
    };
    let text = std::fs::read_to_string(spec).map_err(io(spec))?;
    let spec = RunSpec::from_json(&text)?;
    if std::env::var(PANIC_SEED_VAR).ok().and_then(|s| s.parse::<u64>().ok()) == Some(spec.seed) {
        panic!("{PANIC_SEED_VAR}={}", spec.seed);
    }
    let r = spec.execute()?;
    let json = serde_json::to_string_pretty(&r).expect("a report serialises");
    std::fs::write(report, json + "\n").map_err(io(report))
}
