//! # ssdlab-testkit: the conformance suite every FTL and architecture must pass
//!
//! ```text
//!   clients (random commands) ──NVMe──▶ device under test ──▶ FTL ──▶ FIL ──▶ NAND
//!        │                                                      ▲
//!        └──── shadow store: what every LBA must read back ─────┘ invariants between rounds
//! ```
//!
//! [`Conformance`] builds a device from a configuration, runs rounds of random reads, writes,
//! trims, write-zeroes and flushes from concurrent clients (random sizes and alignments, never
//! two in flight on one block), checks every read against a [`ShadowStore`], and between rounds
//! — with nothing in flight — checks the FTL's invariants. A failure names the seed, so that
//! the run can be repeated exactly.
//!
//! [`crash`] runs crash cycles against any system over NAND images with that oracle.
//!
//! [`durability`] is the crash oracle: which versions of each block a crash may leave behind
//! under volatile write-cache semantics (flushed and FUA writes survive, nothing foreign ever
//! appears).

mod conformance;
pub mod crash;
mod devices;
pub mod durability;
mod shadow;

pub use conformance::{Conformance, Outcome, Plan};
pub use devices::small_device;
pub use shadow::{ShadowStore, pattern};
