//! Write frontiers and the choice of plane for each page.
//!
//! Each stream (user, GC, mapping) has one open block per plane; pages are handed out in order
//! within it. User pages go to a plane chosen by the allocation policy: a static order striping
//! over channels, ways, dies and planes (CWDP and its permutations), or dynamically to the least
//! busy die or the plane with the most free blocks.

use nand::{DieIdx, Geometry, PageIdx, Ppa};

use crate::ftl::blocks::{BlockManager, Stream};
use crate::ftl::config::{AllocConfig, Dim};

#[derive(Copy, Clone, Default)]
struct Frontier {
    block: Option<nand::BlockIdx>,
    next: u32,
}

/// Open blocks and the plane-choice policy.
pub struct Allocator {
    geo: Geometry,
    open: [Vec<Frontier>; 3],
    policy: AllocConfig,
    /// The static order's planes, one period of it (it repeats every plane count).
    stripe: Vec<u32>,
    counter: u64,
    mapping_counter: u64,
    rr: u32,
}

/// How much of a plane's free pool a stream must leave alone: host data leaves the foreground
/// reserve, translation pages leave one block so that GC can always move a victim.
pub fn keep(stream: Stream, hard_free: u32) -> u32 {
    match stream {
        Stream::User => hard_free,
        Stream::Mapping => 1,
        Stream::Gc => 0,
    }
}

impl Allocator {
    /// Frontiers for `geo` under `policy` (validated).
    pub fn new(geo: &Geometry, policy: &AllocConfig) -> Self {
        let planes = (geo.total_dies() * geo.planes) as usize;
        let stripe = match policy.order() {
            Some(order) => (0..planes as u64).map(|i| static_plane(geo, order, i)).collect(),
            None => Vec::new(),
        };
        Allocator {
            geo: geo.clone(),
            open: std::array::from_fn(|_| vec![Frontier::default(); planes]),
            stripe,
            policy: policy.clone(),
            counter: 0,
            mapping_counter: 0,
            rr: 0,
        }
    }

    /// Makes `block` (open in `blocks`, `next` pages written) the frontier of `stream` in its
    /// plane; returns `false`, leaving everything as it was, if that frontier is taken.
    pub fn adopt(&mut self, stream: Stream, block: nand::BlockIdx, next: u32, blocks: &BlockManager) -> bool {
        let f = &mut self.open[stream as usize][blocks.plane_of(block) as usize];
        if f.block.is_some() || next >= self.geo.pages {
            return false;
        }
        *f = Frontier { block: Some(block), next };
        true
    }

    /// Whether `stream` can get a page in `plane` now (room in its open block, or a free block
    /// beyond what it must leave).
    pub fn has_room(&self, stream: Stream, plane: u32, blocks: &BlockManager, hard_free: u32) -> bool {
        self.open[stream as usize][plane as usize].block.is_some()
            || blocks.free_count(plane) > keep(stream, hard_free)
    }

    /// Pages left in `stream`'s open block of `plane` (0 if none is open).
    pub fn pages_left(&self, stream: Stream, plane: u32) -> u32 {
        let f = &self.open[stream as usize][plane as usize];
        if f.block.is_some() { self.geo.pages - f.next } else { 0 }
    }

    /// The next page of `stream` in `plane`, opening a block if needed; `None` if the plane has
    /// no room for this stream. Marks the page's program as pending in its block.
    pub fn page_in(
        &mut self,
        stream: Stream,
        plane: u32,
        blocks: &mut BlockManager,
        hard_free: u32,
    ) -> Option<PageIdx> {
        self.pages_in(stream, plane, 1, blocks, hard_free).map(|(page, _)| page)
    }

    /// Up to `want` (at least 1) consecutive pages of `stream` in `plane`, all in one block:
    /// the first and how many. Opens a block if needed; `None` if the plane has no room for
    /// this stream. Marks their programs as pending in the block.
    pub fn pages_in(
        &mut self,
        stream: Stream,
        plane: u32,
        want: u32,
        blocks: &mut BlockManager,
        hard_free: u32,
    ) -> Option<(PageIdx, u32)> {
        let f = &mut self.open[stream as usize][plane as usize];
        if f.block.is_none() {
            f.block = Some(blocks.take(plane, stream, keep(stream, hard_free))?);
            f.next = 0;
        }
        let block = f.block.expect("opened");
        let page = self.geo.page_of(block, f.next);
        let n = want.clamp(1, self.geo.pages - f.next);
        f.next += n;
        blocks.add_pending(block, n);
        if f.next == self.geo.pages {
            blocks.close(block);
            f.block = None;
        }
        Some((page, n))
    }

    /// The plane for the next user page, or `None` if no plane has room (foreground GC must run
    /// first). `die_load` gives each die's FIL load for the least-busy policy.
    pub fn user_plane(
        &mut self,
        blocks: &BlockManager,
        hard_free: u32,
        die_load: &dyn Fn(DieIdx) -> u32,
    ) -> Option<u32> {
        let planes = blocks.planes();
        let open = &self.open[Stream::User as usize];
        let room =
            |p: u32| open[p as usize].block.is_some() || blocks.free_count(p) > keep(Stream::User, hard_free);
        match &self.policy {
            AllocConfig::Static { .. } => {
                // The next plane in the order; if it is full, the first one after it with room
                // (a plane GC cannot clean must not stall every write).
                // (A write that finds no room anywhere looks at every plane, once per wake-up
                // while it waits: the period is walked in place, without a division per plane.)
                let off = (self.counter % self.stripe.len() as u64) as usize;
                let (before, from) = self.stripe.split_at(off);
                let k = from.iter().chain(before).position(|&p| room(p))?;
                self.counter += k as u64 + 1;
                Some(self.stripe[(off + k) % self.stripe.len()])
            }
            AllocConfig::LeastBusy => {
                let dies = self.geo.total_dies();
                let ppd = self.geo.planes;
                let best = (0..dies)
                    .map(|k| (self.rr + k) % dies)
                    .filter(|&d| (0..ppd).any(|p| room(d * ppd + p)))
                    .min_by_key(|&d| die_load(DieIdx(d)))?;
                let p = (0..ppd)
                    .map(|p| best * ppd + p)
                    .filter(|&p| room(p))
                    .max_by_key(|&p| blocks.free_count(p))?;
                self.rr = (best + 1) % dies;
                Some(p)
            }
            AllocConfig::LeastUtilised => {
                let best = (0..planes)
                    .map(|k| (self.rr + k) % planes)
                    .filter(|&p| room(p))
                    .max_by_key(|&p| blocks.free_count(p))?;
                Some(best)
            }
        }
    }

    /// The plane for the next translation page: the planes in turn (in the static order, or
    /// in index order under the dynamic policies), skipping those without room, so that
    /// translation-page writes spread over the array as data does.
    pub fn mapping_plane(&mut self, blocks: &BlockManager) -> Option<u32> {
        let planes = blocks.planes() as u64;
        let start = self.mapping_counter;
        let plane =
            (0..planes).map(|k| self.turn(start + k)).find(|&p| self.has_room(Stream::Mapping, p, blocks, 0));
        self.mapping_counter += 1;
        plane
    }

    /// The `i`-th plane in turn: the static order's, or index order.
    fn turn(&self, i: u64) -> u32 {
        if self.stripe.is_empty() { (i % self.open[0].len() as u64) as u32 } else { self.static_plane(i) }
    }

    /// Plane of the `i`-th page under the static order.
    fn static_plane(&self, i: u64) -> u32 {
        self.stripe[(i % self.stripe.len() as u64) as usize]
    }
}

/// Plane of the `i`-th page under the static `order` (fastest dimension first).
fn static_plane(g: &Geometry, order: [Dim; 4], i: u64) -> u32 {
    let mut rest = i;
    let mut coord = [0u32; 4];
    for dim in order {
        let n = match dim {
            Dim::C => g.channels,
            Dim::W => g.ways,
            Dim::D => g.dies,
            Dim::P => g.planes,
        } as u64;
        coord[dim as usize] = (rest % n) as u32;
        rest /= n;
    }
    let [c, w, d, p] = coord;
    let ppa = Ppa { channel: c as u16, way: w as u16, die: d as u8, plane: 0, block: 0, page: 0 };
    g.die_idx(ppa).0 * g.planes + p
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::ByteSize;

    fn geo() -> Geometry {
        Geometry {
            channels: 2,
            ways: 2,
            dies: 1,
            planes: 2,
            blocks: 8,
            pages: 2,
            page_size: ByteSize::kib(16),
            oob_size: ByteSize(0),
            mapping_unit: ByteSize::kib(4),
        }
    }

    #[test]
    fn cwdp_stripes_channels_first() {
        let g = geo();
        let a = Allocator::new(&g, &AllocConfig::Static { order: "CWDP".into() });
        // Plane numbering: die (c * ways + w) * planes + p.
        let planes: Vec<u32> = (0..8).map(|i| a.static_plane(i)).collect();
        assert_eq!(planes, vec![0, 4, 2, 6, 1, 5, 3, 7]);
        let b = Allocator::new(&g, &AllocConfig::Static { order: "PCWD".into() });
        let planes: Vec<u32> = (0..4).map(|i| b.static_plane(i)).collect();
        assert_eq!(planes, vec![0, 1, 4, 5]);
    }

    /// Takes free blocks of `plane` until host data may not take another.
    fn leave_no_room(blocks: &mut BlockManager, plane: u32, hard_free: u32) {
        while blocks.free_count(plane) > hard_free {
            blocks.take(plane, Stream::Gc, 0).expect("a free block");
        }
    }

    #[test]
    fn the_static_order_skips_planes_without_room_and_wraps_around() {
        let g = geo();
        let mut blocks = BlockManager::new(&g, false, &[]);
        let mut a = Allocator::new(&g, &AllocConfig::Static { order: "CWDP".into() });
        let (hard, idle) = (2, |_: DieIdx| 0);
        // CWDP visits 0, 4, 2, 6, 1, 5, 3, 7; planes 4 and 2 have no room for host data.
        leave_no_room(&mut blocks, 4, hard);
        leave_no_room(&mut blocks, 2, hard);
        let mut next = |blocks: &BlockManager| a.user_plane(blocks, hard, &idle);
        let picks: Vec<_> = (0..7).map(|_| next(&blocks).unwrap()).collect();
        assert_eq!(picks, [0, 6, 1, 5, 3, 7, 0]);
        // Plane 7, the last of the period, fills too: the search past it starts over at 0.
        leave_no_room(&mut blocks, 7, hard);
        let picks: Vec<_> = (0..6).map(|_| next(&blocks).unwrap()).collect();
        assert_eq!(picks, [6, 1, 5, 3, 0, 6]);
        for p in [0, 6, 1, 5, 3] {
            leave_no_room(&mut blocks, p, hard);
        }
        assert_eq!(next(&blocks), None, "no plane has room: the write waits for GC");
    }

    #[test]
    fn frontiers_hand_out_pages_in_order_and_close_full_blocks() {
        let g = geo();
        let mut blocks = BlockManager::new(&g, false, &[]);
        let mut a = Allocator::new(&g, &AllocConfig::default());
        let p0 = a.page_in(Stream::User, 0, &mut blocks, 2).unwrap();
        let p1 = a.page_in(Stream::User, 0, &mut blocks, 2).unwrap();
        assert_eq!(p1.0, p0.0 + 1);
        let b = g.block_of(p0);
        assert_eq!(blocks.info(b).pending, 2);
        assert!(!blocks.is_candidate(b), "closed but programs pending");
        blocks.done_pending(b, 2);
        assert!(blocks.is_candidate(b));
    }
}
