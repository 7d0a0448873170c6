//! A bridge-based device (BSSD): a PCIe-to-SAS/SATA bridge in front of several complete SSDs,
//! striping host commands over them (RAID-0). Each SSD is the ordinary firmware (its own
//! controller, FTL, GC and DRAM) and all of them run in one simulation.
//!
//! ```text
//!   host thin driver ─PCIe─▶ bridge: queue (depth) ─▶ conversion engine(s) ─▶ stripe
//!                                                            │ SAS/SATA links
//!                              ┌─────────────┬───────────────┼──────────────┐
//!                            SSD 0         SSD 1          SSD 2  ...     SSD K-1
//!                      (HIL, FTL, FIL, NAND each; the rest of the configuration describes one)
//! ```

mod front;
mod stripe;
mod system;

pub use front::Bridge;
pub use system::BridgeSystem;
