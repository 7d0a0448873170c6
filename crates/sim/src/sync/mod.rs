//! Synchronisation primitives for tasks: oneshot completions, notify / wait queues, coroutine
//! mutexes, firmware locks (spin and sleeping, with their cost on the core), bounded rings
//! between cores and stage queues that carry a request from one pipeline stage's core to the next. All are single-threaded and deterministic, and each
//! records what a waiting task waits on for deadlock reports.

pub mod lock;
pub mod mutex;
pub mod notify;
pub mod oneshot;
pub mod ring;
pub mod stage;

pub use lock::{Lock, LockClass, LockCosts, LockKind, LockStats, LockTable};
pub use mutex::{Mutex, MutexGuard, MutexStats};
pub use notify::Notify;
pub use ring::{Ring, RingSpec, RingStats};
pub use stage::{StageQueue, StageQueueSpec, StageQueueStats};
