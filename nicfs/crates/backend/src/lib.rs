//! The NICFS back end: the emulated SmartNIC that applies front ends' logs to the public
//! space.
//!
//! ```text
//!   per front end (log space)                                    shared
//!  ┌──────────────────────────────────────────────────────┐
//!  │ Log Fetch ──> Data Locate ──> Merge ──> Patch ────────┼──> engine lock, redo journal
//!  │ headers by    file blocks via  range     inode/index  │    host copy engine (bulk data)
//!  │ DMA           index-line cache trees     updates      │
//!  └──────────────────────────────────────────────────────┘
//!        each stage runs on one of N weak NIC cores (CorePool, slowdown factor)
//!        all PM access goes through the DMA model (DmaPm: latency + bandwidth)
//!   control thread: comm rings (hello, leases, inode grants, drain), reaping dead slots
//! ```
//!
//! Ordering rules:
//! 1. A batch's metadata changes and its log-head advance commit in one journal transaction;
//!    data copies are durable before that commit (the copy engine fences).
//! 2. Batches of one log are patched in log order (one patch thread per log, FIFO channels).
//! 3. While patching, the seqlock of every touched inode is odd, so front ends reading the
//!    public space retry instead of seeing a half-patched inode.
//! 4. A revoked write lease is re-granted only after the holder's in-flight operations end
//!    and its log is applied up to the tail it had then.
//! 5. Every record's blocks were reserved before it was logged; a batch's reservations are
//!    released after its commit (see `reserve.rs`), so applying a record never runs out of
//!    space.

mod backend;
mod config;
mod control;
mod copy;
mod cores;
mod direct;
mod dma;
mod fetch;
mod leases;
mod locate;
mod merge;
mod patch;
mod pipeline;
mod reserve;
mod shared;

pub use backend::{Backend, RecoveryReport, open, open_parts, open_with};
pub use config::{BackendConfig, BackendConfigError, DmaModel};
pub use copy::{CopyEngine, CopyReq};
pub use cores::CorePool;
pub use direct::DirectLink;
pub use dma::DmaPm;
pub use fetch::{Batch, Entry, fetch};
pub use locate::{Located, locate};
pub use merge::{InodePlan, RangeMap, SizeOp, Step, merge};
pub use patch::{PatchStats, patch};
pub use shared::{Counters, Shared};
