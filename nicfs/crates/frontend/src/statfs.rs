//! File-system totals for `statfs`, counted from the public bitmaps.

use nicfs_layout::{BLOCK_SIZE, bit_get};
use nicfs_pm::PmAddr;

use crate::Client;

/// Totals (approximate while logs are not applied).
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
    /// Counts free blocks and inodes in the public space.
    pub fn statfs(&self) -> StatFs {
        let geo = *self.space.geo_ref();
        let count = |start: u32, blocks: u32, n: u32| {
            let mut buf = vec![0u8; (blocks as u64 * BLOCK_SIZE) as usize];
            self.pm.read(PmAddr(start as u64 * BLOCK_SIZE), &mut buf);
            (0..n as u64).filter(|&i| !bit_get(&buf, i)).count() as u64
        };
        StatFs {
            blocks: geo.data_blocks as u64,
            free_blocks: count(geo.bbitmap_start, geo.bbitmap_blocks, geo.data_blocks),
            inodes: geo.inode_count as u64,
            free_inodes: count(geo.ibitmap_start, geo.ibitmap_blocks, geo.inode_count),
        }
    }
}
