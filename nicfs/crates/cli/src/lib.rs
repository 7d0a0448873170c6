//! NICFS tools: the checkers and benchmarks behind the `nicfs` command.
//!
//! * [`crashcheck`]: every crash image at every fence recovers to an allowed state;
//! * [`mount`]: creating and opening the PM and comm files of a file system.

pub mod crashcheck;
pub mod model;
pub mod mount;
pub mod rng;
