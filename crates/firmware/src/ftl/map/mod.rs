//! Logical-to-physical mapping: the L2P table, DFTL's cached mapping table and global
//! translation directory. The asynchronous flows (loading on a miss, writing translation pages
//! back) live with the FTL, which owns the flash access they need.

mod cmt;
mod dftl;
mod table;

pub use cmt::Cmt;
pub use dftl::Dftl;
pub use table::L2p;
