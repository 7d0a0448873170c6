//! The cached mapping table (CMT): which segments of mapping entries are in DRAM, in LRU
//! order, and which are dirty. A segment is `segment_entries` consecutive LPNs; classic DFTL is
//! one entry per segment.
//!
//! The CMT may be split between flows (`ftl.mapping.partition`, MQSim's `CMT_Sharing_Mode`):
//! each partition has its own capacity and LRU list, a segment counts against the partition of
//! the flow that loaded it, and room for a flow is made by evicting that flow's segments only.
//! A lookup that finds a segment another flow loaded is a hit all the same (the segment stays
//! in its owner's partition). Shared (the default) is one partition of every segment.

use rustc_hash::FxHashMap;

use super::segmap::SegMap;
use crate::fil::FlowTag;

const NIL: u32 = u32::MAX;
const CACHED: u8 = 1;
const DIRTY: u8 = 2;
const LOADING: u8 = 4;

/// A cached segment's place in the LRU list.
#[derive(Copy, Clone)]
struct Node {
    seg: u32,
    prev: u32,
    next: u32,
}

/// One partition: its capacity, its segments and its LRU list.
#[derive(Clone)]
struct Part {
    capacity: u32,
    cached: u32,
    loading: u32,
    head: u32,
    tail: u32,
}

impl Part {
    fn new(capacity: u32) -> Part {
        Part { capacity, cached: 0, loading: 0, head: NIL, tail: NIL }
    }
}

/// Segment states (a byte per segment) and an LRU list of the cached segments per partition
/// (head = most recently used). The lists live in nodes for the cached segments only, found
/// through a map from segment to node (`SegMap`): classic DFTL keeps one entry per logical
/// page, and links per segment would cost 8 bytes per logical page (1 GiB at 512 GiB) for a
/// cache of a few hundred thousand entries.
pub struct Cmt {
    /// One partition (shared), or one per flow.
    parts: Vec<Part>,
    dirty: u32,
    state: Vec<u8>,
    nodes: Vec<Node>,
    /// Each node's partition, beside the nodes (empty while the CMT is shared).
    node_part: Vec<u8>,
    /// The partition each segment being loaded will join (empty while the CMT is shared).
    loading_part: FxHashMap<u32, u8>,
    /// Nodes not in use (their indices).
    spare: Vec<u32>,
    node_of: SegMap,
    /// Lookups per flow tag (`FlowTag.0`): [hits, misses] (no flow: tag 0); the CMT's totals
    /// are their sums ([`lookups`](Self::lookups)).
    by_flow: Vec<[u64; 2]>,
}

impl Cmt {
    /// A CMT of `capacity` segments over `segments` segments.
    pub fn new(segments: u32, capacity: u32) -> Self {
        let room = capacity.min(segments) as usize + 1;
        Cmt {
            parts: vec![Part::new(capacity)],
            dirty: 0,
            state: vec![0; segments as usize],
            nodes: Vec::with_capacity(room),
            node_part: Vec::new(),
            loading_part: FxHashMap::default(),
            spare: Vec::new(),
            node_of: SegMap::with_capacity(room),
            by_flow: vec![[0; 2]; FlowTag::FLOWS + 1],
        }
    }

    /// Segments the CMT holds in all.
    pub fn capacity(&self) -> u32 {
        self.parts.iter().map(|p| p.capacity).sum()
    }

    /// Segments partition `part` holds at most.
    pub fn part_capacity(&self, part: usize) -> u32 {
        self.parts[part].capacity
    }

    /// Partitions.
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// The partition of `flow`'s lookups: flow `k` (tag `k + 1`) has partition `k`; no flow
    /// (and any flow while the CMT is shared) the first.
    #[inline]
    pub fn part_of(&self, flow: FlowTag) -> usize {
        match self.parts.len() {
            1 => 0,
            n => (flow.0 as usize).saturating_sub(1).min(n - 1),
        }
    }

    /// Splits the CMT into partitions of `capacities` segments (one partition: shared).
    /// Segments already cached are dealt out least recently used first, in turn, to the
    /// partitions with room (all full: to the next in turn, which evicts on its next miss);
    /// segments being loaded join the first partition.
    pub fn partition(&mut self, capacities: &[u32]) {
        assert!(!capacities.is_empty() && capacities.len() <= 256, "1 to 256 partitions");
        let mut order = Vec::with_capacity(self.node_of.len());
        for p in 0..self.parts.len() {
            let mut n = self.parts[p].tail;
            while n != NIL {
                order.push(n);
                n = self.nodes[n as usize].prev;
            }
        }
        let loading: Vec<u32> = match self.parts.len() {
            1 => (0..self.state.len() as u32).filter(|&s| self.is_loading(s)).collect(),
            _ => self.loading_part.keys().copied().collect(),
        };
        let was_loading: u32 = self.parts.iter().map(|p| p.loading).sum();
        self.parts = capacities.iter().map(|&c| Part::new(c)).collect();
        self.parts[0].loading = was_loading;
        self.loading_part.clear();
        self.node_part = if capacities.len() > 1 { vec![0; self.nodes.len()] } else { Vec::new() };
        if self.parts.len() > 1 {
            self.loading_part.extend(loading.into_iter().map(|s| (s, 0)));
        }
        let k = self.parts.len();
        let mut next = 0;
        for n in order {
            if let Some(p) =
                (0..k).map(|i| (next + i) % k).find(|&p| self.parts[p].cached < self.parts[p].capacity)
            {
                next = p;
            }
            self.parts[next].cached += 1;
            self.set_part(n, next);
            self.push_head(next, n);
            next = (next + 1) % k;
        }
    }

    /// Counts a lookup by `flow`: a hit or a miss.
    #[inline]
    pub fn count(&mut self, flow: FlowTag, hit: bool) {
        self.by_flow[flow.0 as usize][!hit as usize] += 1;
    }

    /// (hits, misses) of every lookup: those that found their segment cached, and those that
    /// had to load it.
    pub fn lookups(&self) -> (u64, u64) {
        self.by_flow.iter().fold((0, 0), |(h, m), [fh, fm]| (h + fh, m + fm))
    }

    /// (hits, misses) of `flow`'s lookups.
    pub fn flow_counts(&self, flow: FlowTag) -> (u64, u64) {
        let [h, m] = self.by_flow[flow.0 as usize];
        (h, m)
    }

    /// Whether `seg` is cached.
    pub fn is_cached(&self, seg: u32) -> bool {
        self.state[seg as usize] & CACHED != 0
    }
    /// Brings `seg`'s state toward the CPU cache (a hint: see [`sim::prefetch`]).
    #[inline]
    pub fn prefetch(&self, seg: u32) {
        if let Some(x) = self.state.get(seg as usize) {
            sim::prefetch(x);
        }
    }
    /// Whether `seg` is being loaded.
    pub fn is_loading(&self, seg: u32) -> bool {
        self.state[seg as usize] & LOADING != 0
    }
    /// Whether `seg` is cached and dirty.
    pub fn is_dirty(&self, seg: u32) -> bool {
        self.state[seg as usize] & DIRTY != 0
    }

    /// Segments of partition `part` cached or being loaded, against its capacity.
    pub fn over_capacity(&self, part: usize) -> bool {
        let p = &self.parts[part];
        p.cached + p.loading > p.capacity
    }

    /// Moves a cached segment to the head of its partition's LRU list.
    pub fn touch(&mut self, seg: u32) {
        debug_assert!(self.is_cached(seg));
        let n = self.node_of.get(seg).expect("a cached segment has a node");
        let p = self.part_of_node(n);
        if self.parts[p].head != n {
            self.unlink(p, n);
            self.push_head(p, n);
        }
    }

    /// Marks `seg` as loading into partition `part` (it counts against its capacity).
    pub fn start_loading(&mut self, seg: u32, part: usize) {
        self.state[seg as usize] |= LOADING;
        self.parts[part].loading += 1;
        if self.parts.len() > 1 {
            self.loading_part.insert(seg, part as u8);
        }
    }

    /// A loaded segment enters its partition, clean, at the head.
    pub fn finish_loading(&mut self, seg: u32) {
        let p = match self.parts.len() {
            1 => 0,
            _ => self.loading_part.remove(&seg).map_or(0, |p| p as usize),
        };
        self.state[seg as usize] = CACHED;
        self.parts[p].loading -= 1;
        self.parts[p].cached += 1;
        let node = Node { seg, prev: NIL, next: NIL };
        let n = match self.spare.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() as u32 - 1
            }
        };
        self.set_part(n, p);
        self.node_of.insert(seg, n);
        self.push_head(p, n);
    }

    /// Marks a cached segment dirty.
    pub fn mark_dirty(&mut self, seg: u32) {
        debug_assert!(self.is_cached(seg));
        let s = &mut self.state[seg as usize];
        self.dirty += (*s & DIRTY == 0) as u32;
        *s |= DIRTY;
    }

    /// Marks every cached segment in `segs` clean (their translation page is being written);
    /// returns whether all of them are cached. One pass over their state bytes: a translation
    /// page holds 2,048 one-entry segments under classic DFTL.
    pub fn mark_clean_all(&mut self, segs: std::ops::Range<u32>) -> bool {
        let states = &mut self.state[segs.start as usize..segs.end as usize];
        let (mut cleaned, mut cached) = (0u32, 0u32);
        for s in states.iter_mut() {
            cleaned += (*s & DIRTY != 0) as u32;
            cached += (*s & CACHED != 0) as u32;
            *s &= !DIRTY;
        }
        self.dirty -= cleaned;
        cached as usize == states.len()
    }

    /// Cached segments that are dirty.
    pub fn dirty_count(&self) -> usize {
        self.dirty as usize
    }

    /// Segments partition `part` holds.
    #[cfg(test)]
    pub fn cached_in(&self, part: usize) -> u32 {
        self.parts[part].cached
    }

    /// The least recently used cached segment of partition `part`.
    pub fn lru(&self, part: usize) -> Option<u32> {
        let t = self.parts[part].tail;
        (t != NIL).then(|| self.nodes[t as usize].seg)
    }

    /// Drops a clean cached segment.
    pub fn evict(&mut self, seg: u32) {
        debug_assert!(self.is_cached(seg) && !self.is_dirty(seg));
        let n = self.node_of.remove(seg).expect("a cached segment has a node");
        let p = self.part_of_node(n);
        self.unlink(p, n);
        self.spare.push(n);
        self.state[seg as usize] = 0;
        self.parts[p].cached -= 1;
        // The next miss evicts the new tail: ask the CPU for what that touches at random (its
        // state byte, its slot in the node map, and the node before it, which becomes the tail).
        let t = self.parts[p].tail;
        if t != NIL {
            let Node { seg, prev, .. } = self.nodes[t as usize];
            self.prefetch(seg);
            self.node_of.prefetch(seg);
            if prev != NIL {
                sim::prefetch(&self.nodes[prev as usize]);
            }
        }
    }

    #[inline]
    fn part_of_node(&self, n: u32) -> usize {
        match self.parts.len() {
            1 => 0,
            _ => self.node_part[n as usize] as usize,
        }
    }

    fn set_part(&mut self, n: u32, p: usize) {
        if self.parts.len() > 1 {
            if self.node_part.len() <= n as usize {
                self.node_part.resize(n as usize + 1, 0);
            }
            self.node_part[n as usize] = p as u8;
        }
    }

    fn unlink(&mut self, p: usize, n: u32) {
        let Node { prev, next, .. } = self.nodes[n as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next
        } else {
            self.parts[p].head = next
        }
        if next != NIL { self.nodes[next as usize].prev = prev } else { self.parts[p].tail = prev }
    }

    fn push_head(&mut self, p: usize, n: u32) {
        let old = self.parts[p].head;
        self.nodes[n as usize].prev = NIL;
        self.nodes[n as usize].next = old;
        if old != NIL {
            self.nodes[old as usize].prev = n;
        }
        self.parts[p].head = n;
        if self.parts[p].tail == NIL {
            self.parts[p].tail = n;
        }
    }

    /// Bytes of RAM used by the bookkeeping (the entries themselves live in the L2P table).
    pub fn resident_bytes(&self) -> usize {
        self.state.capacity()
            + self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.node_part.capacity()
            + self.spare.capacity() * 4
            + self.node_of.slots() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_order_and_capacity() {
        let mut c = Cmt::new(10, 2);
        for s in [3, 5] {
            c.start_loading(s, 0);
            c.finish_loading(s);
        }
        assert!(!c.over_capacity(0));
        c.touch(3);
        assert_eq!(c.lru(0), Some(5));
        c.start_loading(7, 0);
        assert!(c.over_capacity(0));
        c.mark_dirty(5);
        c.mark_clean_all(5..6);
        c.evict(5);
        c.finish_loading(7);
        assert_eq!(c.lru(0), Some(3));
        assert_eq!(c.cached_in(0), 2);
    }

    #[test]
    fn dirty_count_follows_marks_and_nodes_are_reused() {
        let mut c = Cmt::new(100, 3);
        for s in [10, 20, 30] {
            c.start_loading(s, 0);
            c.finish_loading(s);
        }
        c.mark_dirty(20);
        c.mark_dirty(20);
        c.mark_dirty(30);
        assert_eq!(c.dirty_count(), 2);
        c.mark_clean_all(20..21);
        c.mark_clean_all(20..21);
        assert_eq!(c.dirty_count(), 1);
        assert_eq!(c.lru(0), Some(10));
        c.evict(10);
        c.evict(20);
        assert_eq!(c.lru(0), Some(30));
        for s in [40, 50] {
            c.start_loading(s, 0);
            c.finish_loading(s);
        }
        assert_eq!(c.nodes.len(), 3, "evicted segments' nodes are reused");
        c.touch(30);
        assert_eq!(c.lru(0), Some(40));
        c.mark_clean_all(30..31);
        c.evict(40);
        c.evict(50);
        c.evict(30);
        assert_eq!((c.lru(0), c.cached_in(0), c.dirty_count()), (None, 0, 0));
    }

    #[test]
    fn marking_a_range_clean_says_whether_all_of_it_is_cached() {
        let mut c = Cmt::new(16, 8);
        for s in 4..8 {
            c.start_loading(s, 0);
            c.finish_loading(s);
        }
        c.start_loading(8, 0); // loading is not cached
        for s in [5, 6, 7] {
            c.mark_dirty(s);
        }
        assert_eq!(c.dirty_count(), 3);
        assert!(c.mark_clean_all(4..6), "4 and 5 are cached");
        assert_eq!(c.dirty_count(), 2);
        assert!(!c.is_dirty(5) && c.is_dirty(6) && c.is_dirty(7));
        assert!(!c.mark_clean_all(6..9), "8 is only loading");
        assert!(!c.mark_clean_all(0..4));
        assert_eq!(c.dirty_count(), 0);
        assert!(c.is_cached(6) && c.is_loading(8));
    }

    /// Loads `seg` for `flow`, as the FTL does on a miss: room first, in the flow's partition.
    fn load(c: &mut Cmt, seg: u32, flow: FlowTag) -> Vec<u32> {
        let p = c.part_of(flow);
        c.count(flow, false);
        c.start_loading(seg, p);
        let mut evicted = Vec::new();
        while c.over_capacity(p) {
            let v = c.lru(p).expect("a full partition has segments");
            c.evict(v);
            evicted.push(v);
        }
        c.finish_loading(seg);
        evicted
    }

    #[test]
    fn a_flow_filling_its_partition_evicts_only_its_own_segments() {
        let (a, b) = (FlowTag::of_flow(0), FlowTag::of_flow(1));
        let mut c = Cmt::new(1000, 8);
        c.partition(&[4, 4]);
        assert_eq!((c.part_of(a), c.part_of(b), c.part_of(FlowTag::NONE)), (0, 1, 0));
        for s in [1, 2] {
            load(&mut c, s, a);
        }
        // Flow b streams over many segments: it only ever evicts its own.
        for s in 100..200 {
            let evicted = load(&mut c, s, b);
            assert!(evicted.iter().all(|&v| v >= 100), "b evicted {evicted:?}");
            assert!(c.cached_in(1) <= 4);
        }
        assert!(c.is_cached(1) && c.is_cached(2), "a's segments survive b's stream");
        assert_eq!((c.cached_in(0), c.cached_in(1)), (2, 4));
        // A hit on b's segment is a hit for a, and the segment stays b's.
        c.touch(199);
        c.count(a, true);
        assert_eq!(c.flow_counts(a), (1, 2));
        assert_eq!(c.flow_counts(b), (0, 100));
        assert_eq!(c.lookups(), (1, 102));
        for s in 200..203 {
            load(&mut c, s, a);
        }
        assert_eq!(c.lru(1), Some(196), "touching 199 left b's order alone but for 199");
        assert_eq!(load(&mut c, 203, a), vec![2], "a's full partition evicts a's oldest");
        assert!(c.is_cached(199) && c.is_cached(196));
    }

    #[test]
    fn the_same_stream_in_a_shared_cmt_evicts_the_other_flows_segments() {
        let (a, b) = (FlowTag::of_flow(0), FlowTag::of_flow(1));
        let mut c = Cmt::new(1000, 8);
        for s in [1, 2] {
            load(&mut c, s, a);
        }
        for s in 100..110 {
            load(&mut c, s, b);
        }
        assert!(!c.is_cached(1) && !c.is_cached(2));
        assert_eq!(c.part_of(b), 0);
    }

    #[test]
    fn partitioning_deals_out_cached_and_loading_segments() {
        let mut c = Cmt::new(100, 6);
        for s in 0..5 {
            c.start_loading(s, 0);
            c.finish_loading(s);
        }
        c.start_loading(50, 0);
        c.partition(&[3, 3]);
        // Least recently used first, in turn: 0, 2, 4 to the first; 1, 3 to the second.
        assert_eq!((c.cached_in(0), c.cached_in(1)), (3, 2));
        assert_eq!((c.lru(0), c.lru(1)), (Some(0), Some(1)));
        assert!(c.over_capacity(0), "the load in flight counts in the first partition");
        c.finish_loading(50);
        assert_eq!(c.cached_in(0), 4);
        c.evict(0);
        c.evict(2);
        assert_eq!(c.lru(0), Some(4));
        assert_eq!(c.capacity(), 6);
    }
}
