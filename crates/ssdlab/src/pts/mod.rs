//! `ssdlab pts`: the SNIA Solid State Storage Performance Test Specification's Enterprise IOPS
//! test and write-saturation test (WSAT), on a simulated device or a live target through fio.
//!
//! ```text
//!   Settings ──▶ runner (purge, precondition, rounds / intervals) ──▶ PtsReport ──▶ table, chart, JSON
//!                      │
//!                      ▼ one Job at a time (fio options)
//!                 Executor: Simulated (virtual time, one device) | Fio (a device, file or NBD URI)
//! ```
//!
//! The steady-state test is [`steady`]; what each step runs is [`plan`]. `docs/pts.md` says
//! where the implementation departs from the spec.

mod chart;
mod executor;
mod fio;
pub mod plan;
mod runner;
mod simulated;
pub mod steady;
mod table;

use serde::Serialize;

pub use chart::write_charts;
pub use executor::{Executor, Measured, PtsError};
pub use fio::{Fio, NbdSizeError, Target, nbd_size, parse_fio_json};
pub use plan::{Job, Limit, Settings};
pub use runner::{Cell, Interval, IopsResult, Observer, Point, Round, WsatResult, iops_test, wsat_test};
pub use simulated::Simulated;
pub use table::text;

/// The specification followed.
pub const SPEC: &str =
    "SNIA SSS PTS Enterprise v1.1 (IOPS test, write saturation test), as carried into PTS v2.0.2";

/// Everything a PTS run measured: what `--json` writes.
#[derive(Clone, Debug, Serialize)]
pub struct PtsReport {
    /// The specification followed.
    pub spec: String,
    /// The device or target.
    pub target: String,
    /// Its user capacity, bytes.
    pub capacity_bytes: u64,
    /// The settings.
    pub settings: Settings,
    /// Where the settings depart from the spec.
    pub departures: Vec<String>,
    /// The IOPS test, if run.
    pub iops: Option<IopsResult>,
    /// The write-saturation test, if run.
    pub wsat: Option<WsatResult>,
    /// Wall-clock seconds the run took (the only field that differs between identical runs).
    pub wall_seconds: f64,
}

/// Runs the tests `settings` asks for on `ex`.
pub fn run(
    ex: &mut dyn Executor,
    settings: &Settings,
    obs: &mut dyn Observer,
) -> Result<PtsReport, PtsError> {
    settings.validate().map_err(PtsError::Settings)?;
    let started = std::time::Instant::now();
    for d in settings.departures() {
        obs.note(&format!("note: departs from the spec: {d}"));
    }
    let iops = if settings.iops { Some(iops_test(ex, settings, obs)?) } else { None };
    let wsat = if settings.wsat { Some(wsat_test(ex, settings, obs)?) } else { None };
    Ok(PtsReport {
        spec: SPEC.into(),
        target: ex.describe(),
        capacity_bytes: ex.capacity(),
        settings: settings.clone(),
        departures: settings.departures(),
        iops,
        wsat,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}
