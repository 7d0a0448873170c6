//! # ssdlab-firmware: the SSD controller firmware
//!
//! ```text
//!   host --NVMe--> HIL --> FTL (mapping, cache, GC, WL) --> [ FIL ] --> NAND array (nand crate)
//! ```
//!
//! Firmware is written in the coroutine style of ssdlab's runtime (`sim`): each request is an
//! async function that awaits what a controller waits for — flash transactions, DMA, CPU time
//! on its core. Layers: the NVMe host interface ([`hil`]), the flash translation layer
//! ([`ftl`]), the flash interface layer ([`fil`], per-die transaction queues and the timing of
//! dies and channels) and the ECC engine ([`ecc`]), laid out on controller cores by an
//! architecture ([`arch`]) into a [`device::Device`]. [`snapshot`] saves an aged device;
//! [`config`] is the configuration, [`config::set`] changes one field of it by its path.
//! [`system`] is what hosts and reports see of any storage system: this crate's SSD, and the
//! bridge (`ssdlab-bridge`) and host-side FTL (`ssdlab-hostftl` over `ssdlab-raw`) built on it.

pub mod arch;
pub mod checkpoint;
pub mod config;
pub mod device;
pub mod ecc;
pub mod fil;
pub mod flow;
pub mod ftl;
pub mod hil;
pub mod platform;
pub mod power;
pub mod presets;
pub mod snapshot;
pub mod system;
pub mod trace;
