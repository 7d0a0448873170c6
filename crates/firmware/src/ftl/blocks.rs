//! The block manager: which blocks are free, open, closed or being collected, per plane, and
//! the counters that keep GC from erasing a block under a pending program or read.
//!
//! Planes are numbered globally in flat block order (`plane = block / blocks_per_plane`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use nand::{BlockIdx, Geometry};

/// Which write stream a block belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Host data written back from the cache.
    User = 0,
    /// Data migrated by garbage collection and wear levelling.
    Gc = 1,
    /// Translation pages.
    Mapping = 2,
}

impl Stream {
    /// The stream whose `as u8` value is `v` (as snapshots and checkpoints store it).
    pub fn from_u8(v: u8) -> Option<Stream> {
        match v {
            0 => Some(Stream::User),
            1 => Some(Stream::Gc),
            2 => Some(Stream::Mapping),
            _ => None,
        }
    }
}

/// A block's role.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BlockUse {
    /// Erased, in its plane's free pool.
    Free,
    /// A write frontier: pages are being handed out.
    Open,
    /// Every page handed out.
    Closed,
    /// Chosen by GC or wear levelling; its valid data is being moved.
    Victim,
    /// Never used: bad from the factory, or retired after a failed program or erase.
    Bad,
}

/// Per-block bookkeeping.
#[derive(Copy, Clone, Debug)]
pub struct BlockInfo {
    /// Role.
    pub usage: BlockUse,
    /// Stream that filled it (meaningful once opened).
    pub stream: Stream,
    /// Order in which blocks closed (FIFO and cost-benefit age).
    pub closed_seq: u64,
    /// Programs handed out but not yet completed.
    pub pending: u32,
    /// Reads in flight (the block must not be erased under them).
    pub pins: u32,
    /// A program into it failed: no more pages go to it, its valid data is moved out, and it
    /// is retired instead of erased.
    pub retiring: bool,
    /// Data refresh queued it: its data is moved out and it is erased.
    pub refreshing: bool,
    /// The FDP reclaim unit handle whose frontier it was opened for (0 without FDP, and for
    /// blocks restored from an array).
    pub handle: u16,
    /// The flow whose data was last programmed into it since its erase (`FlowTag::NONE`: none
    /// yet): its GC moves and erase count for that flow (docs/multi-tenant.md).
    pub flow: crate::fil::FlowTag,
}

/// Free pools and block states.
pub struct BlockManager {
    blocks_per_plane: u32,
    info: Vec<BlockInfo>,
    /// Per plane: free blocks keyed by erase count (dynamic WL) or release order (FIFO).
    free: Vec<BinaryHeap<Reverse<(u64, u32)>>>,
    dynamic_wl: bool,
    release_seq: u64,
    close_seq: u64,
}

/// The free pools' order and the block counters ([`BlockManager::pool_state`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolState {
    /// Every free block and its key in its plane's pool, by block.
    pub free: Vec<(u32, u64)>,
    /// Blocks released so far (the next key of a pool ordered by release).
    pub release_seq: u64,
    /// Blocks closed so far.
    pub close_seq: u64,
}

impl BlockManager {
    /// Every good block free; `bad` blocks are never used.
    pub fn new(geo: &Geometry, dynamic_wl: bool, bad: &[BlockIdx]) -> Self {
        let n = geo.total_blocks() as usize;
        let planes = (geo.total_dies() * geo.planes) as usize;
        let blank = BlockInfo {
            usage: BlockUse::Free,
            stream: Stream::User,
            closed_seq: 0,
            pending: 0,
            pins: 0,
            retiring: false,
            refreshing: false,
            handle: 0,
            flow: crate::fil::FlowTag::NONE,
        };
        let mut m = BlockManager {
            blocks_per_plane: geo.blocks,
            info: vec![blank; n],
            free: (0..planes).map(|_| BinaryHeap::new()).collect(),
            dynamic_wl,
            release_seq: 0,
            close_seq: 0,
        };
        for b in bad {
            m.info[b.idx()].usage = BlockUse::Bad;
        }
        for b in 0..n as u32 {
            if m.info[b as usize].usage == BlockUse::Free {
                m.push_free(BlockIdx(b), 0);
            }
        }
        m
    }

    /// Block roles rebuilt from array state (`(write_ptr, erase_count, bad)` per block, flat
    /// order) and, for partly written blocks, the stream that was filling them and the order
    /// in which full blocks closed. Partly written blocks come back open; the caller gives
    /// them to the allocator as frontiers (or closes the ones it cannot use).
    pub fn restore(
        geo: &Geometry,
        dynamic_wl: bool,
        states: impl Iterator<Item = (u32, u32, bool)>,
        hint: impl Fn(BlockIdx) -> (Stream, u64),
    ) -> Self {
        let mut m = BlockManager::new(geo, dynamic_wl, &[]);
        for f in &mut m.free {
            f.clear();
        }
        for (b, (write_ptr, erase_count, bad)) in states.enumerate() {
            let block = BlockIdx(b as u32);
            let (stream, closed_seq) = hint(block);
            let i = &mut m.info[b];
            i.stream = stream;
            if bad {
                i.usage = BlockUse::Bad;
            } else if write_ptr == 0 {
                m.push_free(block, erase_count);
            } else if write_ptr < geo.pages {
                i.usage = BlockUse::Open;
            } else {
                i.usage = BlockUse::Closed;
                i.closed_seq = closed_seq;
                m.close_seq = m.close_seq.max(closed_seq);
            }
        }
        m
    }

    /// The global plane holding `block`.
    pub fn plane_of(&self, block: BlockIdx) -> u32 {
        block.0 / self.blocks_per_plane
    }

    /// Blocks of global plane `plane`.
    pub fn plane_blocks(&self, plane: u32) -> impl Iterator<Item = BlockIdx> + use<> {
        let first = plane * self.blocks_per_plane;
        (first..first + self.blocks_per_plane).map(BlockIdx)
    }

    /// Number of planes.
    pub fn planes(&self) -> u32 {
        self.free.len() as u32
    }

    fn push_free(&mut self, b: BlockIdx, erase_count: u32) {
        let key = if self.dynamic_wl { erase_count as u64 } else { self.release_seq };
        self.release_seq += 1;
        let plane = self.plane_of(b) as usize;
        self.free[plane].push(Reverse((key, b.0)));
        let i = &mut self.info[b.idx()];
        (i.usage, i.refreshing, i.flow) = (BlockUse::Free, false, crate::fil::FlowTag::NONE);
    }

    /// A page of `flow`'s data is being programmed into `block` (no flow: nothing changes).
    pub fn programmed_for(&mut self, block: BlockIdx, flow: crate::fil::FlowTag) {
        if flow != crate::fil::FlowTag::NONE {
            self.info[block.idx()].flow = flow;
        }
    }

    /// Data refresh queued `block` (closed) to be rewritten.
    pub fn mark_refreshing(&mut self, block: BlockIdx) {
        self.info[block.idx()].refreshing = true;
    }

    /// Free blocks in `plane`.
    pub fn free_count(&self, plane: u32) -> u32 {
        self.free[plane as usize].len() as u32
    }

    /// Free blocks in every plane.
    pub fn total_free(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }

    /// Takes a free block of `plane` for `stream`, keeping `keep` blocks in the pool.
    pub fn take(&mut self, plane: u32, stream: Stream, keep: u32) -> Option<BlockIdx> {
        self.take_for(plane, stream, 0, keep)
    }

    /// [`take`](Self::take) for FDP reclaim unit handle `handle`.
    pub fn take_for(&mut self, plane: u32, stream: Stream, handle: u16, keep: u32) -> Option<BlockIdx> {
        if self.free_count(plane) <= keep {
            return None;
        }
        let Reverse((_, b)) = self.free[plane as usize].pop().expect("counted");
        let i = &mut self.info[b as usize];
        i.usage = BlockUse::Open;
        i.stream = stream;
        i.handle = handle;
        Some(BlockIdx(b))
    }

    /// Every page of `block` has been handed out.
    pub fn close(&mut self, block: BlockIdx) {
        self.close_seq += 1;
        let i = &mut self.info[block.idx()];
        i.usage = BlockUse::Closed;
        i.closed_seq = self.close_seq;
    }

    /// `n` programs into `block` were handed out.
    pub fn add_pending(&mut self, block: BlockIdx, n: u32) {
        self.info[block.idx()].pending += n;
    }

    /// `n` programs into `block` completed.
    pub fn done_pending(&mut self, block: BlockIdx, n: u32) {
        self.info[block.idx()].pending -= n;
    }

    /// A read of `block` is about to be issued.
    pub fn pin(&mut self, block: BlockIdx) {
        self.info[block.idx()].pins += 1;
    }

    /// A read of `block` completed.
    pub fn unpin(&mut self, block: BlockIdx) {
        self.info[block.idx()].pins -= 1;
    }

    /// Whether GC or wear levelling may take `block` as a victim (retiring blocks are
    /// collected first, by their plane's GC, and are candidates too).
    pub fn is_candidate(&self, block: BlockIdx) -> bool {
        let i = &self.info[block.idx()];
        i.usage == BlockUse::Closed && i.pending == 0
    }

    /// Marks `block` as being collected.
    pub fn set_victim(&mut self, block: BlockIdx) {
        debug_assert!(self.is_candidate(block));
        self.info[block.idx()].usage = BlockUse::Victim;
    }

    /// A program into `block` failed: it takes no more pages and is retired once its data has
    /// moved (see [`BlockInfo::retiring`]). Returns whether it was not retiring already.
    pub fn mark_retiring(&mut self, block: BlockIdx) -> bool {
        !std::mem::replace(&mut self.info[block.idx()].retiring, true)
    }

    /// Takes `block` out of use for good (a grown bad block): it was being collected, or it
    /// is a free block whose erase failed.
    pub fn retire(&mut self, block: BlockIdx) {
        let i = &mut self.info[block.idx()];
        debug_assert!(matches!(i.usage, BlockUse::Victim | BlockUse::Closed));
        (i.usage, i.retiring, i.refreshing) = (BlockUse::Bad, false, false);
    }

    /// Good blocks (not bad) in `plane`.
    pub fn good_in(&self, plane: u32) -> u32 {
        self.plane_blocks(plane).filter(|b| self.info[b.idx()].usage != BlockUse::Bad).count() as u32
    }

    /// Returns an erased block to its plane's pool.
    pub fn release(&mut self, block: BlockIdx, erase_count: u32) {
        debug_assert_eq!(self.info[block.idx()].usage, BlockUse::Victim);
        self.push_free(block, erase_count);
    }

    /// A block's bookkeeping.
    pub fn info(&self, block: BlockIdx) -> &BlockInfo {
        &self.info[block.idx()]
    }

    /// The order-keeping state a restore from array state cannot know: every free block with
    /// its key in the pool (erase count under dynamic WL, release order otherwise), and the
    /// release and close counters.
    pub fn pool_state(&self) -> PoolState {
        let mut free: Vec<(u32, u64)> =
            self.free.iter().flat_map(|f| f.iter().map(|Reverse((key, b))| (*b, *key))).collect();
        free.sort_unstable();
        PoolState { free, release_seq: self.release_seq, close_seq: self.close_seq }
    }

    /// Restores what [`pool_state`](Self::pool_state) returned over a manager
    /// [`restore`](Self::restore)d from the same array state. Returns the first block that is
    /// not free here, if any (the state belongs to another array).
    pub fn set_pool_state(&mut self, s: &PoolState) -> Result<(), BlockIdx> {
        let mut pools: Vec<BinaryHeap<Reverse<(u64, u32)>>> =
            self.free.iter().map(|_| BinaryHeap::new()).collect();
        for &(b, key) in &s.free {
            let block = BlockIdx(b);
            if self.info.get(block.idx()).is_none_or(|i| i.usage != BlockUse::Free) {
                return Err(block);
            }
            pools[self.plane_of(block) as usize].push(Reverse((key, b)));
        }
        if pools.iter().map(|p| p.len() as u64).sum::<u64>() != self.total_free() {
            let missing = (0..self.info.len() as u32)
                .find(|&b| self.info[b as usize].usage == BlockUse::Free && !s.free.iter().any(|f| f.0 == b));
            return Err(BlockIdx(missing.unwrap_or(0)));
        }
        self.free = pools;
        self.release_seq = s.release_seq;
        self.close_seq = s.close_seq;
        Ok(())
    }

    /// Counts of blocks per role, for invariant checks: (free, open, closed, victim, bad).
    pub fn census(&self) -> [u64; 5] {
        let mut c = [0u64; 5];
        for i in &self.info {
            c[i.usage as usize] += 1;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::ByteSize;

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            ways: 1,
            dies: 1,
            planes: 2,
            blocks: 4,
            pages: 4,
            page_size: ByteSize::kib(16),
            oob_size: ByteSize(0),
            mapping_unit: ByteSize::kib(4),
        }
    }

    #[test]
    fn pools_keep_reserves_and_prefer_low_wear() {
        let mut m = BlockManager::new(&geo(), true, &[BlockIdx(1)]);
        assert_eq!((m.free_count(0), m.free_count(1)), (3, 4));
        let a = m.take(0, Stream::User, 2).unwrap();
        assert_eq!(m.take(0, Stream::User, 2), None, "the last two stay for GC");
        let b = m.take(0, Stream::Gc, 0).unwrap();
        m.close(a);
        m.close(b);
        m.set_victim(a);
        m.release(a, 5);
        m.set_victim(b);
        m.release(b, 1);
        // Dynamic WL: lowest erase count first: the never-erased block 3, then b (erased
        // once), then a (five times).
        assert_eq!(m.take(0, Stream::User, 0), Some(BlockIdx(3)));
        assert_eq!(m.take(0, Stream::User, 0), Some(b));
        assert_eq!(m.take(0, Stream::User, 0), Some(a));
        assert_eq!(m.census(), [4, 3, 0, 0, 1]);
    }
}
