//! Storage systems as a host sees them. A [`System`] is whatever the host drives: one SSD
//! ([`Device`](crate::device::Device)), a bridge striping over several SSDs, or a raw flash
//! array under a host-side FTL. Host drivers submit through its [`Front`]; reports and time
//! series read its counters through [`Sample`] (cheap, every interval) and [`Totals`] (once).
//!
//! ```text
//!   host workload drivers ──▶ Front::submit ──▶ NVMe controller │ bridge │ host-side FTL
//!   time series sampler   ──▶ System::sample ─┐
//!   report                ──▶ System::totals ─┴─ FTL, FIL, array, link, energy counters
//! ```

mod error;
mod front;
mod front_core;
mod host;
mod memory;
mod meter;
mod queues;
mod slots;
mod ssd;
mod totals;

pub use error::SystemError;
pub use front::{BlockFront, Front, FrontFuture};
pub use front_core::{FrontCore, Served};
pub use host::HostStack;
pub use memory::MemoryMeter;
pub use meter::DeviceMeter;
pub use queues::QueueError;
pub use slots::Slots;
pub use ssd::DeviceProbe;
pub use totals::{HostUse, Sample, Totals, merge_fil, merge_ftl};

use std::rc::Rc;

use sim::{CoreId, Sim};

use crate::config::DeviceConfig;
use crate::platform::Platform;

/// Reads a system's cumulative counters (see [`System::sampler`]).
pub type Sampler = Rc<dyn Fn() -> Sample>;

/// What every system hands its users, whatever its kind (see [`System::handles`]).
pub struct Handles<'a> {
    /// The simulation it runs in.
    pub sim: &'a Sim,
    /// The configuration it was built from.
    pub config: &'a DeviceConfig,
    /// Where host commands go.
    pub front: Front,
    /// I/O queue pairs a host may create (1..=this).
    pub queues: u32,
    /// The host's storage stack, where the system models it.
    pub host: Option<&'a HostStack>,
}

impl<'a> Handles<'a> {
    /// The handles of a system built on `platform` (its simulation and configuration, the
    /// queues of its `[host]` interface) taking commands at `front`; no host modelled.
    pub fn on(platform: &'a Platform, front: Front) -> Handles<'a> {
        Handles {
            sim: &platform.sim,
            config: &platform.config,
            front,
            queues: platform.config.host.queues,
            host: None,
        }
    }

    /// The same handles with the host's storage stack `host`.
    pub fn with_host(self, host: &'a HostStack) -> Handles<'a> {
        Handles { host: Some(host), ..self }
    }
}

/// A simulated storage system, as host drivers, reports and test suites see it.
///
/// Implementers keep every method cheap enough to call once per time-series interval except
/// [`totals`](System::totals), which is called once at the end of a run.
pub trait System {
    /// Its simulation, configuration, front, queues and host stack (the methods below that
    /// read them are written once, here).
    fn handles(&self) -> Handles<'_>;
    /// A handle that reads the cumulative counters whenever called (a time-series sampler
    /// keeps it in a task of its own).
    fn sampler(&self) -> Sampler;
    /// Everything the report needs, now.
    fn totals(&self) -> Totals;
    /// Checks the FTL's invariants (forward and reverse maps agree, valid counts match, blocks
    /// add up); call with nothing in flight.
    fn check_invariants(&self) -> Result<(), SystemError>;
    /// The simulation it runs in.
    fn sim(&self) -> &Sim {
        self.handles().sim
    }
    /// The configuration it was built from.
    fn config(&self) -> &DeviceConfig {
        self.handles().config
    }
    /// Where host commands go.
    fn front(&self) -> Front {
        self.handles().front
    }
    /// I/O queue pairs a host may create (1..=this).
    fn queues(&self) -> u32 {
        self.handles().queues
    }
    /// Cumulative counters now.
    fn sample(&self) -> Sample {
        (self.sampler())()
    }
    /// The host cores the storage stack's threads run on (host workers are spread over them);
    /// empty when the host is not modelled (an SSD's host tasks use no core).
    fn host_cores(&self) -> Vec<CoreId> {
        self.handles().host.map(|h| h.cores().to_vec()).unwrap_or_default()
    }
    /// Checks that the system can place writes where `placement` says (a host-side FTL's
    /// array has that group or die); the error is one line saying why not.
    fn check_placement(&self, placement: crate::hil::Placement) -> Result<(), SystemError> {
        Err(SystemError::PlacesItself(placement))
    }
    /// Shuts down cleanly: brings the system to rest and checkpoints its state into its NAND
    /// images, so that reopening them mounts exactly. Systems without images say why not.
    fn checkpoint(&self) -> Result<(), SystemError> {
        Err(SystemError::CannotCheckpoint)
    }
}
