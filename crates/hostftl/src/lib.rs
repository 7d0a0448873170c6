//! # ssdlab-hostftl: an FTL that runs on the host
//!
//! ```text
//!   host threads (host cores: system call, block layer, FTL work)
//!      │  HostFtlFront::submit            host memory: mapping table, block table,
//!      ▼                                  data not yet on flash, commands in flight
//!   HostFtl: map (LPN -> PPA), write-allocation lists per die, least-utilised channel first,
//!            host placement (group or die), super-page / pipelined writes, host-scheduled GC
//!      │  RawCommand (read / program / sector / program-buffered / erase at typed PPAs)
//!      ▼  over PCIe
//!   RawArray (ssdlab-raw): array controllers (command slots), SRAM pool, DMA ─▶ FIL ─▶ NAND
//! ```
//!
//! The FTL keeps its whole page map in host memory and owns every placement decision; the
//! device only executes physical commands. It reuses the firmware's policies where they fit:
//! the block manager (free pools, dynamic wear levelling), the write frontiers
//! ([`firmware::ftl::Allocator`]), and GC victim selection
//! ([`firmware::ftl::victim::pick_by`]), under the device's `[ftl]` settings. Its own parts are
//! the paper's: the write path (super-page and pipelined page writes), the allocation lists and
//! least-utilised channel first, placement chosen by the host, and GC the host schedules.
//!
//! [`HostFtlSystem`] puts the array, the host and the FTL in one simulation, as a
//! [`firmware::system::System`] that host drivers, reports and the test kit take.

mod alloc;
mod buffer;
mod check;
mod error;
mod front;
mod ftl;
mod gc;
mod mount;
mod ops;
mod read;
mod system;
mod write;

pub use check::Violation;
pub use error::{GcRequestError, PlacementError};
pub use front::HostFtlFront;
pub use ftl::HostFtl;
pub use mount::{MountError, Parts};
pub use system::{BuildError, HostFtlSystem};
