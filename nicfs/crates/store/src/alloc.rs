//! In-DRAM allocation state, rebuilt from the on-PM bitmaps at mount.

use nicfs_layout::{BLOCK_SIZE, BlockNo, Geometry, Ino, bit_get};
use nicfs_pm::PmAddr;

use crate::{FsError, Space};

/// Mirror of the bitmaps plus reservations. A bit set here means "not allocatable": used on
/// PM, allocated by an uncommitted transaction, freed by one (until it commits), or granted
/// to a front end for a future `create`.
///
/// Block *reservations* are a count, not bits: a front end reserves blocks before it
/// acknowledges a write ([`reserve_blocks`](Self::reserve_blocks)), and they are released
/// when the back end has applied the record that needed them. Allocation itself does not look
/// at reservations (every allocation applies a record whose blocks were reserved); granting
/// does, so the blocks acknowledged writes need are always there.
pub struct Allocator {
    blocks: Vec<bool>,
    inodes: Vec<bool>,
    bcursor: usize,
    icursor: usize,
    free_blocks: u64,
    free_inodes: u64,
    reserved_blocks: u64,
}

impl Allocator {
    /// Reads both bitmaps of `space`.
    pub fn load(space: &Space) -> Allocator {
        let geo = *space.geo_ref();
        let read_bits = |start: u32, blocks: u32, count: u32| {
            let mut buf = vec![0u8; blocks as usize * BLOCK_SIZE as usize];
            space.pm().read(PmAddr(start as u64 * BLOCK_SIZE), &mut buf);
            (0..count as u64).map(|i| bit_get(&buf, i)).collect::<Vec<bool>>()
        };
        let blocks = read_bits(geo.bbitmap_start, geo.bbitmap_blocks, geo.data_blocks);
        let mut inodes = read_bits(geo.ibitmap_start, geo.ibitmap_blocks, geo.inode_count);
        inodes[0] = true;
        let free_blocks = blocks.iter().filter(|b| !**b).count() as u64;
        let free_inodes = inodes.iter().filter(|b| !**b).count() as u64;
        Allocator { blocks, inodes, bcursor: 0, icursor: 1, free_blocks, free_inodes, reserved_blocks: 0 }
    }

    /// Blocks reserved for records not yet applied (and granted but not yet spent).
    pub fn reserved_blocks(&self) -> u64 {
        self.reserved_blocks
    }

    /// Free blocks nobody has reserved.
    pub fn available_blocks(&self) -> u64 {
        self.free_blocks.saturating_sub(self.reserved_blocks)
    }

    /// Reserves between `need` and `want` blocks (as many as are available, up to `want`);
    /// `None` if fewer than `need` are available.
    pub fn reserve_blocks(&mut self, need: u64, want: u64) -> Option<u64> {
        let avail = self.available_blocks();
        if avail < need {
            return None;
        }
        let n = want.max(need).min(avail);
        self.reserved_blocks += n;
        Some(n)
    }

    /// Returns `n` reserved blocks (their record was applied, or their holder left).
    pub fn release_blocks(&mut self, n: u64) {
        self.reserved_blocks = self.reserved_blocks.saturating_sub(n);
    }

    /// Sets the reservation count (recovery recounts it from the logs and the front ends'
    /// unspent grants).
    pub fn set_reserved_blocks(&mut self, n: u64) {
        self.reserved_blocks = n;
    }

    /// Free data blocks.
    pub fn free_blocks(&self) -> u64 {
        self.free_blocks
    }

    /// Free (and ungranted) inodes.
    pub fn free_inodes(&self) -> u64 {
        self.free_inodes
    }

    pub(crate) fn take_block(&mut self, geo: &Geometry) -> Result<BlockNo, FsError> {
        let n = self.blocks.len();
        for k in 0..n {
            let i = (self.bcursor + k) % n;
            if !self.blocks[i] {
                self.blocks[i] = true;
                self.bcursor = i + 1;
                self.free_blocks -= 1;
                return Ok(BlockNo(geo.data_start + i as u32));
            }
        }
        Err(FsError::NoSpace)
    }

    pub(crate) fn release_block(&mut self, geo: &Geometry, b: BlockNo) {
        let i = (b.0 - geo.data_start) as usize;
        if self.blocks.get(i).copied() == Some(true) {
            self.blocks[i] = false;
            self.free_blocks += 1;
        }
    }

    /// Reserves a free inode number (for a front end's future `create`); not on PM until the
    /// create is applied. Lost on restart, which is harmless.
    pub fn reserve_inode(&mut self) -> Result<Ino, FsError> {
        let n = self.inodes.len();
        for k in 0..n {
            let i = (self.icursor + k) % n;
            if !self.inodes[i] {
                self.inodes[i] = true;
                self.icursor = i + 1;
                self.free_inodes -= 1;
                return Ok(Ino(i as u32));
            }
        }
        Err(FsError::NoSpace)
    }

    /// Returns a reservation or a freed inode to the pool.
    pub fn release_inode(&mut self, ino: Ino) {
        let i = ino.0 as usize;
        if i > 0 && self.inodes.get(i).copied() == Some(true) {
            self.inodes[i] = false;
            self.free_inodes += 1;
        }
    }

    pub(crate) fn mark_inode(&mut self, ino: Ino) {
        let i = ino.0 as usize;
        if self.inodes.get(i).copied() == Some(false) {
            self.inodes[i] = true;
            self.free_inodes -= 1;
        }
    }
}

impl Space {
    /// The geometry (by reference).
    pub fn geo_ref(&self) -> &Geometry {
        crate::MetaRead::geo(self)
    }
}
