//! The host interface layer (HIL): NVMe in software, as SoftSSD runs it. Submission and
//! completion queue pairs with doorbells, command fetch and data transfer over a modelled PCIe
//! link, round-robin or weighted arbitration, interrupts with optional coalescing, I/O
//! commands split into mapping-unit sub-requests, and the admin commands a host needs.

mod admin;
mod arbiter;
pub mod config;
mod controller;
mod fdp;
mod handler;
mod link;
mod namespace;
mod nvme;
mod queues;
mod smart;
mod zoned;
pub mod zones;

pub use admin::{AdminCommand, AdminResult, IdentifyController, IdentifyNamespace};
pub use config::{Arbitration, HilCosts, HostInterfaceConfig, LinkConfig, LinkProtocol};
pub use controller::{Controller, HilLayout};
pub use fdp::{FdpConfiguration, FdpConfigurationsLog, FdpStatistics, RuhStatus, RuhUsage};
pub use link::{Dir, Link};
pub use namespace::{Namespace, Part, Parts, split};
pub use nvme::{
    CommandTiming, HostData, NvmeCommand, NvmeCompletion, Opcode, Placement, Status, ZoneAction,
    ZoneDescriptor, ZoneFilter, ZoneOp, ZoneState,
};
pub use queues::Priority;
pub use smart::{SmartCounters, SmartLog};
