//! Firmware architectures: how the HIL, FTL, FIL and ECC are laid out on the controller's
//! cores, and how requests share the FTL's structures. Each architecture builds a
//! [`Device`](crate::device::Device) from the same layers; see `flow` for what differs.

mod build;
mod config;
pub(crate) mod flow;

pub(crate) use build::build;
pub use config::{ArchitectureConfig, LockConfig};
pub use flow::FlowStats;
