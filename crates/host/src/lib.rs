//! # ssdlab-host: what drives a simulated device
//!
//! ```text
//!   [ this crate: workloads, drivers ] --> HIL (NVMe) --> FTL --> FIL --> NAND
//!                  \------ phys driver (raw page ops) ------------^
//! ```
//!
//! [`workload`] describes fio-like jobs (and parses fio job files); [`run`] drives them through
//! a device's NVMe controller. [`phys`] drives the flash interface layer directly with raw page
//! reads, programs and erases, to measure the array and the FIL before (or beneath) any FTL.
//! [`interface`] chooses how commands reach a device: NVMe queue pairs or a legacy synchronous
//! port.

pub mod interface;
pub mod live;
pub mod phys;
pub mod replay;
pub mod run;
pub mod series;
mod session;
pub mod trace;
pub mod workload;
mod zbd;
