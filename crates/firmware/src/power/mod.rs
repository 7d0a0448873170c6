//! The power and energy model: energy per NAND operation (read, program, erase, by cell type),
//! per byte moved over the flash channels, the host link and the controller's DRAM, and the
//! controller cores' active and idle power; for host-side FTLs, the host CPU and host DRAM the
//! storage stack uses, kept apart. Energy is a linear function of cumulative activity counters,
//! so power over an interval is the difference of two energies over its width.
//!
//! ```text
//!   activity counters (FIL ops, channel bytes, core busy, link bytes, elapsed)
//!        │ x per-unit energies and powers (PowerConfig, defaults cited in `defaults.rs`)
//!        ▼
//!   Energy { nand, channels, controller, dram, link, host_cpu, host_dram } (joules)
//! ```

mod activity;
mod config;
mod defaults;
mod energy;

pub use activity::{Activity, HostActivity};
pub use config::{
    ChannelPower, ControllerPower, DramPower, HostPower, LinkPower, NandPower, PowerConfig, ResolvedPower,
};
pub use energy::Energy;
