//! File-system totals for `statfs`, counted from the public bitmaps.

use nicfs_layout::{BLOCK_SIZE, bit_get};
use nicfs_pm::PmAddr;

use crate::Client;

/// Totals (approximate while logs are not applied: blocks that pending records will free
/// count as used, blocks they will allocate as free).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StatFs {
    /// Data blocks.
    pub blocks: u64,
    /// Free data blocks.
    pub free_blocks: u64,
    /// Inodes.
    pub inodes: u64,
    /// Free inodes.
    pub free_inodes: u64,
}

impl Client {
    fn reserved_by_front_ends(&self, slots: usize) -> u64 {
        (0..slots).map(|i| self.comm.slot(i).quota.load(std::sync::atomic::Ordering::Acquire)).sum()
    }

    /// Counts free blocks and inodes in the public space; blocks front ends have reserved and
    /// not yet spent do not count as free.
    pub fn statfs(&self) -> StatFs {
        let geo = *self.space.geo_ref();
        let count = |start: u32, blocks: u32, n: u32| {
            let mut buf = vec![0u8; (blocks as u64 * BLOCK_SIZE) as usize];
            self.pm.read(PmAddr(start as u64 * BLOCK_SIZE), &mut buf);
            (0..n as u64).filter(|&i| !bit_get(&buf, i)).count() as u64
        };
        StatFs {
            blocks: geo.data_blocks as u64,
            free_blocks: count(geo.bbitmap_start, geo.bbitmap_blocks, geo.data_blocks)
                .saturating_sub(self.reserved_by_front_ends(geo.log_spaces as usize)),
            inodes: geo.inode_count as u64,
            free_inodes: count(geo.ibitmap_start, geo.ibitmap_blocks, geo.inode_count),
        }
    }
}
