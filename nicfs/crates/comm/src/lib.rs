//! The comm channel between NICFS front ends (host processes) and the back end (the
//! "SmartNIC" daemon): one small shared-memory region, separate from PM, holding
//!
//! ```text
//! header      magic, back-end pid and heartbeat
//! slot[i]     per log space: owner pid, request ring, response ring (SPSC, 64 B messages)
//! leases      open-addressed table: ino -> writer slot, reader bitmap, expiry, active ops
//! seqlocks    per-inode-bucket sequence counters, odd while the back end patches the inode
//! ```
//!
//! Rules:
//! 1. Each ring has exactly one producer and one consumer; head and tail are atomics.
//! 2. Only the back end changes the lease table's grants; a front end only bumps `active`
//!    around an operation and checks its grant between the bump and the operation, so a
//!    revoking back end that waits for `active == 0` knows no stale operation is in flight.
//! 3. Readers of public-space state that the back end may be patching use the seqlock:
//!    read the counter (even), read, re-read the counter; retry if it changed.

mod clock;
mod lease;
mod msg;
mod region;
mod ring;
mod seqlock;

pub use clock::{mono_ns, pid_alive};
pub use lease::{LeaseEntry, LeaseMode, LeaseTable, REVOKED};
pub use msg::{Msg, MsgKind};
pub use region::{CommError, CommRegion, MAX_SLOTS, Slot};
pub use ring::Ring;
pub use seqlock::SeqLocks;
