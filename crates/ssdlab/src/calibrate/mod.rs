//! `ssdlab calibrate`: fit a preset's timing parameters to a real (or served) drive.
//!
//! ```text
//!   target ──▶ checks (exists, writable, no file system) ──▶ fio: fill the region, then each
//!   plan point (rw, bs, iodepth) ──▶ measured IOPS, mean and p99 latency
//!                                                   │
//!   preset ──▶ parameters (config paths) ──▶ Nelder-Mead in log space ◀──┘
//!                      ▲                               │
//!                      └── simulate every point (in-process, on every core) ◀──┘
//!                                                   │
//!                                         fitted preset + report
//! ```
//!
//! The measurement ([`measure`]) runs fio; everything after it is deterministic: the same
//! measurements, preset and options give the same fit and report.

mod fit;
mod measure;
mod params;
mod plan;
mod report;
mod session;
mod simulate;
mod target;

pub use fit::{FitOptions, FitOutcome, METRICS, fit};
pub use measure::{Measured, Measurement, fio_command, measure, parse_fio};
pub use params::{DEFAULT_FIT, Param, Params};
pub use plan::{Plan, Point};
pub use report::{CalibrationReport, PointRow, fitted_toml};
pub use session::{Calibrated, Request, calibrate};
pub use simulate::{Predicted, simulate_plan};
pub use target::{Target, check_target, fs_signature};

/// Why a calibration stopped: one line for the user.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CalibrateError(pub String);

impl CalibrateError {
    /// An error saying `msg`.
    pub fn new(msg: impl Into<String>) -> CalibrateError {
        CalibrateError(msg.into())
    }
}
