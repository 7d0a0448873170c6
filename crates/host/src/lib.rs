//! # ssdlab-host: what drives a simulated device
//!
//! ```text
//!   [ this crate: workloads, drivers ] --> HIL (NVMe) --> FTL --> FIL --> NAND
//!                  \------ phys driver (raw page ops) ------------^
//! ```
//!
//! [`phys`] drives the flash interface layer directly with raw page reads, programs and erases,
//! to measure the array and the FIL before (or beneath) any FTL.

pub mod phys;
