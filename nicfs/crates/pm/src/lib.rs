//! Emulated persistent memory (PM) for NICFS.
//!
//! There is no Optane DIMM on the machines NICFS runs on, so PM is emulated by one shared,
//! file-backed memory map (a file on tmpfs, like a devdax namespace) that every process maps.
//! Every byte of the file system lives in that map, and every access goes through one small
//! API, the [`Pm`] trait:
//!
//! ```text
//!   front end (library)      back end (daemon)        recovery / fsck
//!          \                      |  (via DMA model)       /
//!           +----------------- Pm trait ------------------+
//!           |  read  store  store_nt  flush  fence  store_u64_atomic
//!   +-------+--------+--------------+----------------------+
//!   | FastPm         | TimedPm<FastPm>  | CrashPm           |
//!   | clwb/clflushopt| + PM cost model  | records per-line  |
//!   | + sfence       |   (latency, bw)  | stores, produces  |
//!   |                |                  | post-crash images |
//!   +----------------+------------------+-------------------+
//! ```
//!
//! Ordering rules the rest of NICFS relies on (the x86 persistency model):
//!
//! 1. A `store` reaches the cache only; it becomes durable at some unknown time, or at the
//!    first `fence` after a `flush` that covers its cache line.
//! 2. A `store_nt` bypasses the cache; it is durable at the next `fence`.
//! 3. `store_u64_atomic` on an 8-byte aligned address is never torn: after a crash the word
//!    holds either the old or the new value.
//! 4. A cache line may be written back at any time by the hardware, so an unflushed store
//!    may or may not survive a crash. [`CrashPm`] enumerates exactly these possibilities.

mod addr;
mod crash;
mod delay;
mod fast;
mod mapped;
mod region;
mod timed;

pub use addr::{CACHE_LINE, PmAddr};
pub use crash::{CrashPm, CrashPoint};
pub use delay::{PAY_THRESHOLD_NS, modelled_wait_ns, settle_delay, spin_for_ns};
pub use fast::{FastPm, FlushKind};
pub use mapped::{MapError, MappedFile};
pub use region::{Pm, SharedPm};
pub use timed::{CostModel, CostModelError, TimedPm};
