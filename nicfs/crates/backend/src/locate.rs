//! Stage 2, Data Locate: resolve the file blocks each write touches through the index-block
//! cache (organised in 64-byte lines of 16 pointers), reading index lines by DMA on a miss.

use nicfs_layout::{BLOCK_SIZE, BlockNo, Geometry, Ino, Inode, LogOp};
use nicfs_pm::PmAddr;
use nicfs_store::{LineCache, MetaRead, Space, bmap, read_inode};

use crate::fetch::Batch;

/// Committed-state reader that serves index lines from the shared cache.
pub(crate) struct CachedReader<'a> {
    pub(crate) space: &'a Space,
    pub(crate) cache: &'a LineCache,
}

impl MetaRead for CachedReader<'_> {
    fn geo(&self) -> &Geometry {
        self.space.geo_ref()
    }

    fn read_meta(&self, addr: PmAddr, buf: &mut [u8]) {
        self.space.pm().read(addr, buf);
    }

    fn read_index_line(&self, addr: PmAddr, line: &mut [u8; 64]) {
        if let Some(l) = self.cache.get(addr.get()) {
            *line = l;
            return;
        }
        let epoch = self.cache.epoch();
        self.space.pm().read(addr, line);
        self.cache.insert_if_current(addr.get(), *line, epoch);
    }
}

/// Where a batch's writes land, as far as the committed state says.
#[derive(Default, Debug)]
pub struct Located {
    /// (inode, file block) -> existing block, or `None` for a hole that Patch must allocate.
    pub blocks: nicfs_store::IntMap<(Ino, u64), Option<BlockNo>>,
}

/// Resolves every block written by `batch`. Failures (a corrupt or not-yet-created inode)
/// leave the block unresolved; Patch works from the authoritative state anyway.
pub fn locate(space: &Space, cache: &LineCache, batch: &Batch) -> Located {
    let r = CachedReader { space, cache };
    let mut inodes: nicfs_store::IntMap<Ino, Option<Inode>> = nicfs_store::IntMap::default();
    let mut out = Located::default();
    for e in &batch.entries {
        let LogOp::Write { ino, offset, .. } = e.hdr.op else { continue };
        let inode = inodes.entry(ino).or_insert_with(|| read_inode(space, ino).ok().filter(|i| i.nlink > 0));
        let Some(inode) = inode.as_ref() else { continue };
        let end = offset + e.hdr.data_len as u64;
        let mut fb = offset / BLOCK_SIZE;
        while fb * BLOCK_SIZE < end {
            if let Ok(b) = bmap(&r, inode, fb) {
                out.blocks.insert((ino, fb), b);
            }
            fb += 1;
        }
    }
    out
}
