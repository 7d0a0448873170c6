//! Synchronisation primitives for tasks: oneshot completions, notify / wait queues, coroutine
//! mutexes and bounded rings between cores. All are single-threaded and deterministic, and each
//! records what a waiting task waits on for deadlock reports.

pub mod mutex;
pub mod notify;
pub mod oneshot;
pub mod ring;

pub use mutex::{Mutex, MutexGuard, MutexStats};
pub use notify::Notify;
pub use ring::{Ring, RingSpec, RingStats};
