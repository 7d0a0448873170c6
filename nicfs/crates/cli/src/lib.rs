//! NICFS tools: the checkers and benchmarks behind the `nicfs` command.
//!
//! * [`crashcheck`]: every crash image at every fence recovers to an allowed state;
//! * [`bench`]: throughput through the library API against baselines;
//! * [`mpcheck`]: several front-end processes, private and shared files, no stale or torn
//!   reads;
//! * [`mount`]: creating and opening the PM and comm files of a file system.

pub mod bench;
pub mod crashcheck;
pub mod model;
pub mod mount;
pub mod mpcheck;
pub mod rng;
