//! NICFS tools: the checkers behind the `nicfs` command (the benchmarks live in the binary).
//!
//! * [`crashcheck`]: every crash image at every fence recovers to an allowed state;
//! * [`mpcheck`]: several front-end processes on private files, regions of a shared file or
//!   the same blocks of it, no stale or torn reads;
//! * [`mount`]: creating and opening the PM and comm files of a file system.

pub mod crashcheck;
pub mod model;
pub mod mount;
pub mod mpcheck;
pub mod rng;
