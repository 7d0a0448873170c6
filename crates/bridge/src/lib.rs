//! # ssdlab-bridge: a bridge in front of several SSDs
//!
//! ```text
//!   host -> [ bridge: HIL-like front, striping ] -> K x ( HIL -> FTL -> FIL -> NAND )
//! ```
//!
//! A bridge-based device (BSSD): a PCIe-to-SAS/SATA bridge in front of several complete SSDs,
//! striping host commands over them (RAID-0), configured by `firmware::config::BridgeConfig`
//! (`[system] kind = "bridge"`). Each SSD is the ordinary firmware (its own
//! controller, FTL, GC and DRAM) and all of them run in one simulation.
//!
//! ```text
//!   host thin driver ─PCIe─▶ bridge: queue (depth) ─▶ conversion engine(s) ─▶ stripe
//!                                                            │ SAS/SATA links
//!                              ┌─────────────┬───────────────┼──────────────┐
//!                            SSD 0         SSD 1          SSD 2  ...     SSD K-1
//!                      (HIL, FTL, FIL, NAND each; the rest of the configuration describes one)
//! ```
//!
//! [`BridgeSystem`] puts the SSDs, the bridge and the host's thin driver in one simulation, as a
//! `firmware::system::System` that host drivers, reports and the test kit take.

mod front;
mod stripe;
mod system;

pub use front::Bridge;
pub use system::BridgeSystem;
