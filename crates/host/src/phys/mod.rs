//! The physical workload driver: raw page reads, programs and erases at chosen addresses and
//! rates, straight into the FIL.

mod addresses;
mod driver;
mod report;
mod workload;

pub use driver::{PhysError, run};
pub use report::{OpReport, PhysReport};
pub use workload::{PhysOp, PhysPattern, PhysWorkload};
