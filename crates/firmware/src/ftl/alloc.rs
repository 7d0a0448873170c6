//! Write frontiers and the choice of plane for each page.
//!
//! Each stream (user, GC, mapping) has one open block per plane; pages are handed out in order
//! within it. User pages go to the plane the placement policy chooses (see `place`);
//! translation pages take the planes in turn.
//!
//! Under FDP each reclaim unit handle has frontiers of its own (a [`Lane`] names one): handle 0
//! uses the streams', the others extra ones (see `fdp`); each handle stripes its pages over
//! the planes with its own copy of the placement policy's cursor.

use nand::{DieIdx, Geometry, PageIdx};

use crate::ftl::blocks::{BlockManager, Stream};
use crate::ftl::config::AllocConfig;
use crate::ftl::place::{Placement, placement};

#[derive(Copy, Clone, Default)]
struct Frontier {
    block: Option<nand::BlockIdx>,
    next: u32,
}

/// Open blocks and the plane-choice policy.
pub struct Allocator {
    geo: Geometry,
    /// Per lane (the three streams, then FDP's extra ones), per plane.
    open: Vec<Vec<Frontier>>,
    policy: Box<dyn Placement>,
    mapping_counter: u64,
    /// FDP: reclaim unit handles (0 without FDP: only the streams' frontiers).
    handles: u16,
    /// FDP: GC has a frontier per handle (persistent isolation).
    gc_per_handle: bool,
    /// FDP: each handle's placement cursor (empty without FDP: the policy keeps its own).
    cursors: Vec<u64>,
    /// NVM sets: the placement cursor of each (handle, set) with a set, so that each set's
    /// pages stripe over its own planes (set 0 uses the cursors above).
    set_cursors: std::collections::BTreeMap<(u16, u8), u64>,
}

/// Whose write frontier a page comes from: a stream's and, under FDP, a reclaim unit handle's
/// (handle 0 is the stream's own frontier).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lane {
    /// The stream.
    pub stream: Stream,
    /// The reclaim unit handle (0 without FDP).
    pub handle: u16,
}

impl Lane {
    /// `stream`'s own frontiers (handle 0).
    pub fn of(stream: Stream) -> Lane {
        Lane { stream, handle: 0 }
    }
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
    /// Frontiers for `geo` under the built-in placement `policy` (validated) names.
    pub fn new(geo: &Geometry, policy: &AllocConfig) -> Self {
        Allocator::with(geo, placement(geo, policy))
    }

    /// Frontiers for `geo` under `policy`.
    pub fn with(geo: &Geometry, policy: Box<dyn Placement>) -> Self {
        let planes = (geo.total_dies() * geo.planes) as usize;
        Allocator {
            geo: geo.clone(),
            open: (0..3).map(|_| vec![Frontier::default(); planes]).collect(),
            policy,
            mapping_counter: 0,
            handles: 0,
            gc_per_handle: false,
            cursors: Vec::new(),
            set_cursors: Default::default(),
        }
    }

    /// Adds FDP's frontiers: `handles` reclaim unit handles for host data and, if
    /// `gc_per_handle`, as many for GC.
    pub fn enable_fdp(&mut self, handles: u16, gc_per_handle: bool) {
        let planes = self.open[0].len();
        let extra = (handles as usize - 1) * if gc_per_handle { 2 } else { 1 };
        self.open.extend((0..extra).map(|_| vec![Frontier::default(); planes]));
        (self.handles, self.gc_per_handle) = (handles, gc_per_handle);
        self.cursors = vec![self.policy.cursor(); handles as usize];
    }

    /// The index in `open` of `lane`'s frontiers.
    fn lane(&self, lane: Lane) -> usize {
        let h = lane.handle as usize;
        match lane.stream {
            _ if h == 0 => lane.stream as usize,
            Stream::User => 2 + h,
            Stream::Gc if self.gc_per_handle => 2 + self.handles as usize - 1 + h,
            Stream::Gc => Stream::Gc as usize, // one shared GC frontier (initial isolation)
            Stream::Mapping => Stream::Mapping as usize,
        }
    }

    /// The lane GC moves data of `handle` into: the handle's own under persistent isolation,
    /// the shared one otherwise.
    pub fn gc_lane(&self, handle: u16) -> Lane {
        Lane { stream: Stream::Gc, handle: if self.gc_per_handle { handle } else { 0 } }
    }

    /// Makes `block` (open in `blocks`, `next` pages written) the frontier of `stream` in its
    /// plane; returns `false`, leaving everything as it was, if that frontier is taken.
    pub fn adopt(&mut self, stream: Stream, block: nand::BlockIdx, next: u32, blocks: &BlockManager) -> bool {
        let lane = self.lane(Lane::of(stream));
        let f = &mut self.open[lane][blocks.plane_of(block) as usize];
        if f.block.is_some() || next >= self.geo.pages {
            return false;
        }
        *f = Frontier { block: Some(block), next };
        true
    }

    /// Whether `stream` can get a page in `plane` now (room in its open block, or a free block
    /// beyond what it must leave).
    pub fn has_room(&self, stream: Stream, plane: u32, blocks: &BlockManager, hard_free: u32) -> bool {
        self.has_room_in(Lane::of(stream), plane, blocks, hard_free)
    }

    /// [`has_room`](Self::has_room) for `lane`'s frontier.
    pub fn has_room_in(&self, lane: Lane, plane: u32, blocks: &BlockManager, hard_free: u32) -> bool {
        self.open[self.lane(lane)][plane as usize].block.is_some()
            || blocks.free_count(plane) > keep(lane.stream, hard_free)
    }

    /// Pages left in `stream`'s open block of `plane` (0 if none is open); for GC under
    /// persistent FDP isolation, in all its handles' open blocks together.
    pub fn pages_left(&self, stream: Stream, plane: u32) -> u32 {
        let left = |i: usize| {
            let f = &self.open[i][plane as usize];
            if f.block.is_some() { self.geo.pages - f.next } else { 0 }
        };
        match stream {
            Stream::Gc if self.gc_per_handle => {
                (0..self.handles).map(|h| left(self.lane(self.gc_lane(h)))).sum()
            }
            _ => left(stream as usize),
        }
    }

    /// Closes `lane`'s open block in `plane` where it stands (an FDP reclaim unit handle moved
    /// to a new reclaim unit): its unwritten pages are not used until it is erased. Returns the
    /// pages it had left.
    pub fn close_open(&mut self, lane: Lane, plane: u32, blocks: &mut BlockManager) -> u32 {
        let i = self.lane(lane);
        let f = &mut self.open[i][plane as usize];
        match f.block.take() {
            Some(b) => {
                blocks.close(b);
                self.geo.pages - f.next
            }
            None => 0,
        }
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
        self.pages_in_lane(Lane::of(stream), plane, want, blocks, hard_free)
    }

    /// [`pages_in`](Self::pages_in) from `lane`'s frontier.
    pub fn pages_in_lane(
        &mut self,
        lane: Lane,
        plane: u32,
        want: u32,
        blocks: &mut BlockManager,
        hard_free: u32,
    ) -> Option<(PageIdx, u32)> {
        let i = self.lane(lane);
        let handle = if i < 3 { 0 } else { lane.handle };
        let f = &mut self.open[i][plane as usize];
        if f.block.is_none() {
            let stream = lane.stream;
            f.block = Some(blocks.take_for(plane, stream, handle, keep(stream, hard_free))?);
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

    /// Stops handing out pages of `block` (a program into it failed): if it is a stream's
    /// frontier, it is closed where it stands and the stream opens another block next time.
    pub fn abandon(&mut self, block: nand::BlockIdx, blocks: &mut BlockManager) {
        let plane = blocks.plane_of(block) as usize;
        for open in &mut self.open {
            if open[plane].block == Some(block) {
                open[plane].block = None;
                blocks.close(block);
            }
        }
    }

    /// The plane for the next user page, or `None` if no plane has room (foreground GC must run
    /// first). `die_load` gives each die's FIL load for the least-busy policy.
    pub fn user_plane(
        &mut self,
        blocks: &BlockManager,
        hard_free: u32,
        die_load: &dyn Fn(DieIdx) -> u32,
        admitted: &dyn Fn(u32) -> bool,
    ) -> Option<u32> {
        self.user_plane_in(0, 0, blocks, hard_free, die_load, admitted)
    }

    /// [`user_plane`](Self::user_plane) for FDP reclaim unit handle `handle` (its own frontiers
    /// and its own turn in the placement policy) and NVM set `set` (0: the whole array; a set
    /// has its own turn too, `admitted` keeps to its planes).
    pub fn user_plane_in(
        &mut self,
        handle: u16,
        set: u8,
        blocks: &BlockManager,
        hard_free: u32,
        die_load: &dyn Fn(DieIdx) -> u32,
        admitted: &dyn Fn(u32) -> bool,
    ) -> Option<u32> {
        let open = &self.open[self.lane(Lane { stream: Stream::User, handle })];
        // Admission first: under pacing it is what most planes fail (both tests are pure).
        let room = |p: u32| {
            admitted(p)
                && (open[p as usize].block.is_some() || blocks.free_count(p) > keep(Stream::User, hard_free))
        };
        if set != 0 {
            let saved = self.policy.cursor();
            let start = self.cursors.get(handle as usize).copied().unwrap_or(saved);
            let cursor = self.set_cursors.entry((handle, set)).or_insert(start);
            self.policy.set_cursor(*cursor);
            let p = self.policy.user_plane(&room, blocks, die_load);
            *cursor = self.policy.cursor();
            self.policy.set_cursor(saved);
            return p;
        }
        if self.cursors.is_empty() {
            return self.policy.user_plane(&room, blocks, die_load);
        }
        self.policy.set_cursor(self.cursors[handle as usize]);
        let p = self.policy.user_plane(&room, blocks, die_load);
        self.cursors[handle as usize] = self.policy.cursor();
        p
    }

    /// The plane for the next translation page: the planes in turn (in the static order, or
    /// in index order under the dynamic policies), skipping those without room, so that
    /// translation-page writes spread over the array as data does.
    pub fn mapping_plane(&mut self, blocks: &BlockManager) -> Option<u32> {
        let planes = blocks.planes() as u64;
        let start = self.mapping_counter;
        let plane = (0..planes)
            .map(|k| self.policy.turn(start + k))
            .find(|&p| self.has_room(Stream::Mapping, p, blocks, 0));
        self.mapping_counter += 1;
        plane
    }

    /// What the allocator remembers beyond its frontiers (which the array and the block hints
    /// give back): the placement policy's cursor and the translation pages' turn.
    pub fn counters(&self) -> [u64; 2] {
        [self.policy.cursor(), self.mapping_counter]
    }

    /// Restores what [`counters`](Self::counters) returned.
    pub fn set_counters(&mut self, [cursor, mapping]: [u64; 2]) {
        self.policy.set_cursor(cursor);
        self.mapping_counter = mapping;
    }
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
        let a = placement(&g, &AllocConfig::Static { order: "CWDP".into() });
        // Plane numbering: die (c * ways + w) * planes + p.
        let planes: Vec<u32> = (0..8).map(|i| a.turn(i)).collect();
        assert_eq!(planes, vec![0, 4, 2, 6, 1, 5, 3, 7]);
        let b = placement(&g, &AllocConfig::Static { order: "PCWD".into() });
        let planes: Vec<u32> = (0..4).map(|i| b.turn(i)).collect();
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
        let mut next = |blocks: &BlockManager| a.user_plane(blocks, hard, &idle, &|_| true);
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
