//! The device configuration: one TOML document describing geometry, timing, controller,
//! firmware and the kind of system around it. Every field documents its default and unit;
//! [`DeviceConfig::validate`] names the first bad field as a dotted path
//! (`geometry.channels: must be at least 1`), and [`set`] changes one field by that path.
//!
//! ```text
//!   DeviceConfig ── geometry, timing, controller, architecture, host (HIL), ftl, fil, ecc, power
//!        └── system: SystemConfig ── ssd
//!                                 ├── bridge:   BridgeConfig   (+ HostStackConfig)
//!                                 └── host-ftl: HostFtlConfig  (ArrayConfig + HostStackConfig)
//! ```
//!
//! The layers' own sections (`FtlConfig`, `HostInterfaceConfig`, ...) live beside the layers;
//! this tree gathers them and imports nothing that builds a device or a system from them.

mod array;
mod bridge;
mod device;
mod host_stack;
mod hostftl;
pub mod set;
mod system;

pub use array::ArrayConfig;
pub use bridge::BridgeConfig;
pub use device::{ControllerConfig, DeviceConfig, LoadError};
pub use host_stack::HostStackConfig;
pub use hostftl::{HostFtlConfig, HostFtlCosts, HostFtlMemory, HostGcConfig, WriteMode, WritePath};
pub use system::SystemConfig;
