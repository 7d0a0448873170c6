//! Static wear levelling: after GC collects a victim in a plane, a wear leveller may name a
//! cold block (rarely rewritten, so rarely erased) to migrate as well, so that its little-worn
//! flash takes hot data. Dynamic wear levelling (the free block with the fewest erases is
//! opened first) is the block manager's.

use nand::{BlockIdx, FlashArray};

use crate::ftl::blocks::BlockManager;

/// Chooses a cold block to migrate after a collection.
///
/// GC calls [`cold`](Self::cold) after each victim of `plane`; a block returned is collected
/// like a victim. The implementer must only return a closed block of that plane (one
/// [`BlockManager::is_candidate`] accepts), and decide from its arguments alone.
pub trait WearLeveller {
    /// The block of `plane` to migrate now, if any.
    fn cold(&self, plane: u32, blocks: &BlockManager, array: &FlashArray) -> Option<BlockIdx>;
}

/// No static wear levelling.
pub struct NoStaticWl;

impl WearLeveller for NoStaticWl {
    fn cold(&self, _: u32, _: &BlockManager, _: &FlashArray) -> Option<BlockIdx> {
        None
    }
}

/// When a plane's erase-count spread exceeds `threshold`, its closed block with the fewest
/// erases (the one closed longest ago among ties, then the lowest).
pub struct StaticWl {
    /// The spread (most minus fewest erases among the plane's good blocks) tolerated.
    pub threshold: u32,
}

impl WearLeveller for StaticWl {
    fn cold(&self, plane: u32, blocks: &BlockManager, array: &FlashArray) -> Option<BlockIdx> {
        let counts = || {
            blocks.plane_blocks(plane).filter(|&b| !array.block(b).bad).map(|b| array.block(b).erase_count)
        };
        let (min, max) = (counts().min()?, counts().max()?);
        if max - min <= self.threshold {
            return None;
        }
        blocks
            .plane_blocks(plane)
            .filter(|&b| blocks.is_candidate(b) && array.block(b).erase_count == min)
            .min_by_key(|&b| (blocks.info(b).closed_seq, b))
    }
}
