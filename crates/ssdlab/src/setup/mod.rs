//! What one run is made of, as `ssdlab run` and every run of `ssdlab sweep` set it up: a
//! device (a preset or a TOML file, changed by `--set PATH=VALUE` and `--blocks`), a workload
//! (fio options on top of the defaults, or a job file), how the device starts, and a seed.
//!
//! ```text
//!   preset / file ──▶ load ──▶ --set paths ──▶ --blocks ──┐
//!   fio options / job file ──▶ jobs ──────────────────────┼──▶ RunSpec ──▶ execute ──▶ Report
//!   --precondition, --seed ───────────────────────────────┘      │
//!                                                                └──▶ content hash (resuming sweeps)
//! ```

mod find_device;
mod set;
mod spec;
mod workload;

pub use find_device::{DEFAULT_DEVICE, DeviceError, SERVE_BLOCKS, load_device, serve_blocks, set_blocks};
pub use set::{SetError, Setting, apply_settings, parse_value, value_text};
pub use spec::{DEFAULT_AGEING, RunSpec, SpecError};
pub use workload::{DEFAULT_JOB, JobOption, WorkloadError, WorkloadSpec};
