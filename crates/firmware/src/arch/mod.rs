//! Firmware architectures: how the HIL, FTL, FIL and ECC are laid out on the controller's
//! cores, and how requests share the FTL's structures. Every architecture runs the same layers;
//! each is one module here (its configuration, its [`Flow`], where its coroutines run), and the
//! shared request path names none of them.
//!
//! ```text
//!   softssd    core hil: fetcher + k workers per queue (HIL, FTL), GC | core fil: FIL | core ecc
//!   tradition  cores 0..N: a fetcher and w request coroutines each, whole requests, locks
//!              on the queues, the cache index, the mapping table and every cache line;
//!              the flash controller's sequencer schedules flash unless a FIL core is set
//!   pipessd    fetch core -> FTL core -> FIL core -> post core, a coroutine per command
//!              moved along SPSC stage queues; GC on the FTL core
//!   deepflash  gather core -> translation core of the LPN's range -> flash-scheduling core
//!              -> gather core; GC on the first translation core
//! ```
//!
//! A new architecture is a type implementing [`Architecture`] and, to be chosen by
//! configuration, a variant of [`ArchitectureConfig`]; a library user can also build a device
//! on one directly ([`Device::builder`](crate::device::Device::builder)).

mod config;
mod deepflash;
mod pipessd;
mod softssd;
mod tradition;

use std::ops::Range;

use sim::config::ConfigError;
use sim::{CoreId, Cx};

use crate::flow::Flow;
use crate::hil::HilLayout;

pub use config::{ArchitectureConfig, LockConfig};
pub use deepflash::Deepflash;
pub use pipessd::Pipessd;
pub use softssd::Softssd;
pub use tradition::Tradition;

/// A firmware architecture: where the layers' coroutines run and how requests share the FTL's
/// structures.
///
/// The device builder calls [`validate`](Self::validate) first (configuration errors name the
/// field), then asks for the cores and builds the [`Flow`] once, before the FTL and the HIL,
/// which both receive it. An implementer only places work and chooses mechanisms: it must not
/// spawn tasks or draw from the simulation's RNG while building (that would change every other
/// task's order and every run's numbers).
pub trait Architecture {
    /// The name reports show (`softssd`, `tradition-4`, ...) on a controller of `cores` cores.
    fn name(&self, cores: usize) -> String;
    /// Checks the placement against a controller of `cores` cores; the error names the field.
    fn validate(&self, cores: usize) -> Result<(), ConfigError>;
    /// The core of the FIL's flash scheduling, if firmware does it (`None`: the flash
    /// controller's own sequencer schedules the transactions).
    fn fil_core(&self) -> Option<usize>;
    /// The core of the ECC's software correction.
    fn ecc_core(&self) -> usize;
    /// The core background FTL work (GC, write-backs, mapping rewrites) is spawned on.
    fn home_core(&self) -> usize;
    /// Cores whose request coroutines may spin for a cache line held across a flash read:
    /// nothing that frees a line (the FIL, the ECC) may run on them. Default: none.
    fn spinning_cores(&self, _cores: usize) -> Range<usize> {
        0..0
    }
    /// Where the host interface's coroutines run, on the controller's `cores` (in order).
    fn layout(&self, cores: &[CoreId]) -> HilLayout;
    /// The flow requests follow on `cores`; `logical`: the FTL's logical units (for an
    /// architecture that partitions them).
    fn flow(&self, cx: &Cx, cores: &[CoreId], logical: u32) -> Flow;
}
