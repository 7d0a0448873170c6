//! # ssdlab-report: one report schema for every run
//!
//! ```text
//!   host results (latency, phases) ─┐
//!   device (FTL, FIL, cores, SMART) ─┼─▶ Report ──▶ JSON (--json)  ──▶ ssdlab compare
//!   configuration, workload, seed ───┘          └──▶ text summary (terminal)
//! ```
//!
//! [`Report`] is versioned ([`SCHEMA`]): fields are added, never renamed or removed, within a
//! version. Every duration is in nanoseconds and every rate per second of simulated time,
//! except the two wall-clock fields (`wall_time_s`, `requests_per_wall_sec`), which are the
//! only fields that differ between two runs of the same inputs. The schema is documented
//! field by field in `docs/report-schema.md`.

mod assemble;
pub mod compare;
mod headline;
mod resources;
mod schema;
mod text;

pub use assemble::{RunInfo, assemble, mean_latency_ns, set_alone};
pub use headline::{Headline, MetricKind, headlines};
pub use resources::{EnergyReport, HostReport, PowerSeries};
pub use schema::*;
pub use text::{breakdown, grouped, summary};
