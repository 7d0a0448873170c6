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

mod device;
mod front;
mod host;
mod memory;
mod queues;
mod slots;
mod totals;

pub use device::DeviceProbe;
pub use front::{BlockFront, Front, FrontFuture, check_command};
pub use host::HostStack;
pub use memory::MemoryMeter;
pub use queues::QueueSet;
pub use slots::Slots;
pub use totals::{HostUse, Sample, Totals, merge_fil, merge_ftl};

use std::rc::Rc;

use sim::Sim;

use crate::config::DeviceConfig;

/// Reads a system's cumulative counters (see [`System::sampler`]).
pub type Sampler = Rc<dyn Fn() -> Sample>;

/// A simulated storage system, as host drivers, reports and test suites see it.
///
/// Implementers keep every method cheap enough to call once per time-series interval except
/// [`totals`](System::totals), which is called once at the end of a run.
pub trait System {
    /// The simulation it runs in.
    fn sim(&self) -> &Sim;
    /// The configuration it was built from.
    fn config(&self) -> &DeviceConfig;
    /// Where host commands go.
    fn front(&self) -> Front;
    /// I/O queue pairs a host may create (1..=this).
    fn queues(&self) -> u32;
    /// A handle that reads the cumulative counters whenever called (a time-series sampler
    /// keeps it in a task of its own).
    fn sampler(&self) -> Sampler;
    /// Cumulative counters now.
    fn sample(&self) -> Sample {
        (self.sampler())()
    }
    /// Everything the report needs, now.
    fn totals(&self) -> Totals;
    /// The host cores the storage stack's threads run on (host workers are spread over them);
    /// empty when the host is not modelled (an SSD's host tasks use no core).
    fn host_cores(&self) -> Vec<sim::CoreId> {
        Vec::new()
    }
    /// Checks that the system can place writes where `placement` says (a host-side FTL's
    /// array has that group or die); the error is one line saying why not.
    fn check_placement(&self, placement: crate::hil::Placement) -> Result<(), String> {
        Err(format!(
            "placement {placement}: this device places writes itself; only a host-side FTL takes a placement"
        ))
    }
    /// Shuts down cleanly: brings the system to rest and checkpoints its state into its NAND
    /// images, so that reopening them mounts exactly. Systems without images say why not.
    fn checkpoint(&self) -> Result<(), String> {
        Err("this system cannot checkpoint".into())
    }
    /// Checks the FTL's invariants (forward and reverse maps agree, valid counts match, blocks
    /// add up); call with nothing in flight.
    fn check_invariants(&self) -> Result<(), String>;
}
