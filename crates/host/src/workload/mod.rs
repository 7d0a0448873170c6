//! fio-like synthetic workloads: jobs, fio job files, and the I/O streams they generate.
//!
//! ```text
//!   job file ──parse_job_file──┐
//!   --rw=.. --bs=.. ──set──────┴─> JobSpec ──validate──> instantiate ──> JobInstance (one per
//!                                  (plain data,           (numjobs        clone: an NVMe queue
//!                                   fio defaults)          expanded)      pair + a JobStream)
//!                                                                          │ next()
//!                                                                          v
//!                                               IoRequest { op, offset, len }, paced by the driver
//! ```
//!
//! 1. A [`JobSpec`] is one fio job as plain data. Job files ([`parse_job_file`]) and command-line
//!    flags both go through [`JobSpec::set`], so they accept the same options and spellings:
//!    [`SUPPORTED_OPTIONS`] are applied, [`IGNORED_OPTIONS`] (engine, file, buffers, reporting)
//!    are accepted and ignored, anything else is rejected by name.
//! 2. [`JobSpec::validate`] checks a job against the device (capacity, LBA size).
//! 3. A [`JobStream`] turns one clone of a job into I/Os, deterministically from a seed. It knows
//!    counts and bytes only; the driver paces it in simulated time from the job's `iodepth`,
//!    `rate_bytes` / `rate_iops` ([`JobSpec::rate_gap`]), `ramp_time` and `runtime`.
//!
//! Where ssdlab differs from fio: `KiB`-style suffixes are powers of 1024 (as `k` is); random
//! offsets come from ssdlab's seeded generator, so `randrepeat=0` still repeats; `hotcold:H/A`
//! is an ssdlab distribution; the random map is a random permutation per pass (see
//! [`JobSpec::norandommap`]); `rwmixread` draws each I/O's direction independently.

mod bssplit;
mod confine;
mod distribution;
mod error;
mod extent;
mod instances;
mod jobfile;
mod options;
mod permute;
mod request;
mod sampler;
mod serde_str;
mod spec;
mod stream;
mod validate;
mod values;

#[cfg(test)]
mod tests;

pub use bssplit::{BsEntry, BsSplit, BsSplitParseError};
pub use confine::{Confinement, parse_indices};
pub use distribution::{Distribution, DistributionParseError, Zone};
pub use error::JobError;
pub use extent::{Extent, ExtentParseError};
pub use instances::{JobInstance, check_jobs, instantiate, job_seed};
pub use jobfile::{JobFileError, LineError, parse_job_file};
pub use options::{IGNORED_OPTIONS, SUPPORTED_OPTIONS};
pub use request::{IoOp, IoRequest, PerDir};
pub use spec::{DEFAULT_BS, JobSpec, MAX_IODEPTH, MAX_JOBS, RwMode, ZbdOptions};
pub use stream::JobStream;
