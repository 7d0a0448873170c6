//! Block-level ageing: a random fill and uniform random overwrites, replayed on each block's
//! count of valid units instead of on units.
//!
//! It drives the FTL's own block manager and allocator (free pools with wear-aware choice,
//! write frontiers, the static or dynamic allocation policy) and follows the untimed GC of
//! [`super::untimed`] step for step — the same thresholds, the same victim policy, the same
//! early stop — but keeps only counts:
//!
//! * a host write adds a unit to the open user page; a full page goes to the plane the
//!   allocation policy picks, and that plane is collected if it fell below its threshold;
//! * an overwrite also removes one valid unit from a block drawn with probability proportional
//!   to its valid count: the block that held the LPN being replaced, under uniform writes. The
//!   draw is by rejection (a uniform block, kept with probability valid / units per block),
//!   which takes about one try on a full device;
//! * a victim's valid units move in bulk into its plane's GC frontier, a partial page last.
//!
//! Greedy victims come from per-plane buckets of blocks by valid count, so a victim costs
//! about as much as a host write; the other policies scan the plane as the timed FTL does.

use std::cell::RefMut;

use nand::BlockIdx;
use rand::Rng;
use sim::SimRng;

use crate::ftl::blocks::{BlockUse, Stream};
use crate::ftl::gc::victim;
use crate::ftl::precondition::{PROGRESS_EVERY, PreconditionError};
use crate::ftl::state::FtlInner;

const NIL: u32 = u32::MAX;

/// What ageing leaves, per block (flat order): pages programmed, data units programmed into
/// them (a partial page leaves padding), units still valid, and erases.
pub(super) struct Aged {
    pub pages: Vec<u32>,
    pub units: Vec<u32>,
    pub valid: Vec<u32>,
    pub erases: Vec<u32>,
}

/// The ageing in progress.
pub(super) struct Ager<'a> {
    ftl: &'a FtlInner,
    upp: u32,
    upb: u32,
    soft: u32,
    aged: Aged,
    /// Greedy's victim index (other policies scan).
    greedy: Option<Buckets>,
    /// Valid units in all blocks.
    valid_total: u64,
    rng: RefMut<'a, SimRng>,
}

impl<'a> Ager<'a> {
    /// An ager for `ftl`, a fresh device.
    pub fn new(ftl: &'a FtlInner) -> Self {
        let geo = &ftl.geo;
        let n = geo.total_blocks() as usize;
        let greedy = ftl.gc.victim.is_greedy().then(|| Buckets::new(n, geo.blocks, geo.units_per_block()));
        Ager {
            upp: geo.units_per_page(),
            upb: geo.units_per_block(),
            soft: ftl.cfg.gc.soft(geo.blocks),
            aged: Aged { pages: vec![0; n], units: vec![0; n], valid: vec![0; n], erases: vec![0; n] },
            greedy,
            valid_total: 0,
            rng: ftl.rng.borrow_mut(),
            ftl,
        }
    }

    /// Writes `fill` units, then `overwrites` units each replacing a valid one, and returns
    /// the state. `progress(done, total)` reports host units.
    pub fn age(
        mut self,
        fill: u64,
        overwrites: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Aged, PreconditionError> {
        let total = fill + overwrites;
        let mut open = 0;
        for k in 0..total {
            if k >= fill {
                self.invalidate_one();
            }
            open += 1;
            if open == self.upp {
                self.user_page(open)?;
                open = 0;
            }
            if k % PROGRESS_EVERY == 0 {
                progress(k, total);
            }
        }
        if open > 0 {
            self.user_page(open)?;
        }
        progress(total, total);
        Ok(self.aged)
    }

    /// Removes one valid unit from a block drawn in proportion to its valid units.
    fn invalidate_one(&mut self) {
        if self.valid_total == 0 {
            return;
        }
        let blocks = self.aged.valid.len() as u64;
        loop {
            let r = self.rng.next_u64();
            let b = (((r & 0xffff_ffff) * blocks) >> 32) as usize;
            let keep = (((r >> 32) * self.upb as u64) >> 32) as u32;
            if keep < self.aged.valid[b] {
                self.aged.valid[b] -= 1;
                self.valid_total -= 1;
                if let Some(g) = &mut self.greedy {
                    g.moved(b as u32, self.aged.valid[b]);
                }
                return;
            }
        }
    }

    /// Programs a user page holding `units` host units, as the untimed writer does: the plane
    /// from the allocation policy, then GC there if the plane ran short.
    fn user_page(&mut self, units: u32) -> Result<(), PreconditionError> {
        let f = self.ftl;
        let hard = f.cfg.gc.hard_free;
        let mut got = None;
        for _ in 0..2 {
            got = {
                let mut alloc = f.alloc.borrow_mut();
                let mut blocks = f.blocks.borrow_mut();
                alloc
                    .user_plane(&blocks, hard, &|_| 0, &|_| true)
                    .and_then(|p| alloc.page_in(Stream::User, p, &mut blocks, hard).map(|page| (p, page)))
            };
            if got.is_some() {
                break;
            }
            self.collect_everywhere()?;
        }
        let Some((plane, page)) = got else {
            return Err(PreconditionError::TooFull("no free user page even after GC".into()));
        };
        self.collect(plane)?;
        self.programmed(f.geo.block_of(page), 1, units);
        Ok(())
    }

    /// Records `pages` programmed into `block` with `units` data units, and indexes the block
    /// once it is closed.
    fn programmed(&mut self, block: BlockIdx, pages: u32, units: u32) {
        let b = block.idx();
        self.aged.pages[b] += pages;
        self.aged.units[b] += units;
        self.aged.valid[b] += units;
        self.valid_total += units as u64;
        let mut blocks = self.ftl.blocks.borrow_mut();
        blocks.done_pending(block, pages);
        if blocks.info(block).usage == BlockUse::Closed
            && let Some(g) = &mut self.greedy
        {
            g.insert(block.0, self.aged.valid[b]);
        }
    }

    fn collect_everywhere(&mut self) -> Result<(), PreconditionError> {
        // Not in the loop head: its temporaries (the borrow) would live through the loop.
        let planes = self.ftl.blocks.borrow().planes();
        for p in 0..planes {
            self.collect(p)?;
        }
        Ok(())
    }

    /// Collects `plane` until it has its background threshold of free blocks (the untimed GC:
    /// it stops early when a collection fills a whole block, having gained nothing).
    fn collect(&mut self, plane: u32) -> Result<(), PreconditionError> {
        let f = self.ftl;
        while f.blocks.borrow().free_count(plane) < self.soft {
            let Some(v) = self.victim(plane) else { return Ok(()) };
            f.blocks.borrow_mut().set_victim(v);
            let mut left = self.aged.valid[v.idx()];
            self.valid_total -= left as u64;
            let mut written = 0;
            while left > 0 {
                let (page, n) = self.gc_pages(plane, left.div_ceil(self.upp))?;
                let units = left.min(n * self.upp);
                self.programmed(f.geo.block_of(page), n, units);
                left -= units;
                written += n;
            }
            let b = v.idx();
            (self.aged.pages[b], self.aged.units[b], self.aged.valid[b]) = (0, 0, 0);
            self.aged.erases[b] += 1;
            f.blocks.borrow_mut().release(v, self.aged.erases[b]);
            if written >= f.geo.pages {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Up to `want` pages of this plane's GC frontier, collecting everywhere first if it has
    /// none (as the untimed GC's allocation does).
    fn gc_pages(&mut self, plane: u32, want: u32) -> Result<(nand::PageIdx, u32), PreconditionError> {
        let f = self.ftl;
        for _ in 0..2 {
            let got = {
                let mut alloc = f.alloc.borrow_mut();
                alloc.pages_in(Stream::Gc, plane, want, &mut f.blocks.borrow_mut(), f.cfg.gc.hard_free)
            };
            if let Some(got) = got {
                return Ok(got);
            }
            self.collect_everywhere()?;
        }
        Err(PreconditionError::TooFull(format!("no free GC page in plane {plane} even after GC")))
    }

    /// The next victim of `plane` under the configured policy.
    fn victim(&mut self, plane: u32) -> Option<BlockIdx> {
        if let Some(g) = &mut self.greedy {
            return g.pop_min(plane, self.upb).map(BlockIdx);
        }
        let valid = &self.aged.valid;
        let blocks = self.ftl.blocks.borrow();
        victim::pick_by(&*self.ftl.gc.victim, plane, &blocks, self.upb, |b| valid[b.idx()], &mut self.rng)
    }
}

/// Closed blocks of each plane bucketed by valid units (intrusive lists), with a floor below
/// which every bucket of the plane is empty: greedy's victim in about constant time. Blocks
/// tied for the fewest valid units come out most recently indexed first (the timed FTL takes
/// the lowest index; either is a greedy choice).
struct Buckets {
    width: u32,
    blocks_per_plane: u32,
    head: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The bucket a block is in, or `NIL`.
    at: Vec<u32>,
    floor: Vec<u32>,
}

impl Buckets {
    fn new(blocks: usize, blocks_per_plane: u32, upb: u32) -> Self {
        let planes = blocks / blocks_per_plane as usize;
        let width = upb + 1;
        Buckets {
            width,
            blocks_per_plane,
            head: vec![NIL; planes * width as usize],
            next: vec![NIL; blocks],
            prev: vec![NIL; blocks],
            at: vec![NIL; blocks],
            floor: vec![0; planes],
        }
    }

    fn insert(&mut self, b: u32, valid: u32) {
        let plane = b / self.blocks_per_plane;
        let k = plane * self.width + valid;
        let h = self.head[k as usize];
        self.next[b as usize] = h;
        self.prev[b as usize] = NIL;
        if h != NIL {
            self.prev[h as usize] = b;
        }
        self.head[k as usize] = b;
        self.at[b as usize] = k;
        let floor = &mut self.floor[plane as usize];
        *floor = (*floor).min(valid);
    }

    fn remove(&mut self, b: u32) {
        let k = std::mem::replace(&mut self.at[b as usize], NIL);
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            self.head[k as usize] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
    }

    /// A block's valid count changed (no-op for blocks not indexed).
    fn moved(&mut self, b: u32, valid: u32) {
        if self.at[b as usize] != NIL {
            self.remove(b);
            self.insert(b, valid);
        }
    }

    /// Takes an indexed block of `plane` with the fewest valid units, if any has fewer than
    /// `upb` (a full block frees nothing).
    fn pop_min(&mut self, plane: u32, upb: u32) -> Option<u32> {
        let base = plane * self.width;
        for v in self.floor[plane as usize]..upb {
            let b = self.head[(base + v) as usize];
            if b != NIL {
                self.floor[plane as usize] = v;
                self.remove(b);
                return Some(b);
            }
        }
        self.floor[plane as usize] = upb;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_give_the_fewest_valid_block_of_a_plane() {
        // Two planes of four blocks, eight units per block.
        let mut g = Buckets::new(8, 4, 8);
        g.insert(0, 5);
        g.insert(1, 3);
        g.insert(2, 8);
        g.insert(5, 1);
        assert_eq!(g.pop_min(0, 8), Some(1));
        g.moved(2, 4); // an indexed block lost units
        g.moved(3, 0); // a block not indexed: ignored
        assert_eq!(g.pop_min(0, 8), Some(2));
        assert_eq!(g.pop_min(0, 8), Some(0));
        assert_eq!(g.pop_min(0, 8), None, "nothing left below 8 valid units");
        g.insert(3, 8);
        assert_eq!(g.pop_min(0, 8), None, "a full block frees nothing");
        assert_eq!(g.pop_min(1, 8), Some(5));
    }
}
