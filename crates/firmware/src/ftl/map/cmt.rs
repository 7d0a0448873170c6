//! The cached mapping table (CMT): which segments of mapping entries are in DRAM, in LRU
//! order, and which are dirty. A segment is `segment_entries` consecutive LPNs; classic DFTL is
//! one entry per segment.

use rustc_hash::FxHashMap;

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

/// Segment states (a byte per segment) and an LRU list of the cached segments (head = most
/// recently used). The list lives in nodes for the cached segments only, found through a hash
/// map: classic DFTL keeps one entry per logical page, and links per segment would cost 8 bytes
/// per logical page (1 GiB at 512 GiB) for a cache of a few hundred thousand entries.
pub struct Cmt {
    capacity: u32,
    cached: u32,
    loading: u32,
    dirty: u32,
    state: Vec<u8>,
    nodes: Vec<Node>,
    /// Nodes not in use (their indices).
    spare: Vec<u32>,
    node_of: FxHashMap<u32, u32>,
    head: u32,
    tail: u32,
    /// Lookups that found their segment cached.
    pub hits: u64,
    /// Lookups that had to load a segment.
    pub misses: u64,
}

impl Cmt {
    /// A CMT of `capacity` segments over `segments` segments.
    pub fn new(segments: u32, capacity: u32) -> Self {
        let room = capacity.min(segments) as usize + 1;
        Cmt {
            capacity,
            cached: 0,
            loading: 0,
            dirty: 0,
            state: vec![0; segments as usize],
            nodes: Vec::with_capacity(room),
            spare: Vec::new(),
            node_of: FxHashMap::with_capacity_and_hasher(room, Default::default()),
            head: NIL,
            tail: NIL,
            hits: 0,
            misses: 0,
        }
    }

    /// Whether `seg` is cached.
    pub fn is_cached(&self, seg: u32) -> bool {
        self.state[seg as usize] & CACHED != 0
    }
    /// Whether `seg` is being loaded.
    pub fn is_loading(&self, seg: u32) -> bool {
        self.state[seg as usize] & LOADING != 0
    }
    /// Whether `seg` is cached and dirty.
    pub fn is_dirty(&self, seg: u32) -> bool {
        self.state[seg as usize] & DIRTY != 0
    }

    /// Segments cached or being loaded, against the capacity.
    pub fn over_capacity(&self) -> bool {
        self.cached + self.loading > self.capacity
    }

    /// Moves a cached segment to the head of the LRU list.
    pub fn touch(&mut self, seg: u32) {
        debug_assert!(self.is_cached(seg));
        let n = self.node_of[&seg];
        if self.head != n {
            self.unlink(n);
            self.push_head(n);
        }
    }

    /// Marks `seg` as loading (it counts against the capacity).
    pub fn start_loading(&mut self, seg: u32) {
        self.state[seg as usize] |= LOADING;
        self.loading += 1;
    }

    /// A loaded segment enters the cache, clean, at the head.
    pub fn finish_loading(&mut self, seg: u32) {
        self.state[seg as usize] = CACHED;
        self.loading -= 1;
        self.cached += 1;
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
        self.node_of.insert(seg, n);
        self.push_head(n);
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

    /// The least recently used cached segment.
    pub fn lru(&self) -> Option<u32> {
        (self.tail != NIL).then(|| self.nodes[self.tail as usize].seg)
    }

    /// Drops a clean cached segment.
    pub fn evict(&mut self, seg: u32) {
        debug_assert!(self.is_cached(seg) && !self.is_dirty(seg));
        let n = self.node_of.remove(&seg).expect("a cached segment has a node");
        self.unlink(n);
        self.spare.push(n);
        self.state[seg as usize] = 0;
        self.cached -= 1;
    }

    fn unlink(&mut self, n: u32) {
        let Node { prev: p, next: x, .. } = self.nodes[n as usize];
        if p != NIL {
            self.nodes[p as usize].next = x
        } else {
            self.head = x
        }
        if x != NIL { self.nodes[x as usize].prev = p } else { self.tail = p }
    }

    fn push_head(&mut self, n: u32) {
        let old = self.head;
        self.nodes[n as usize].prev = NIL;
        self.nodes[n as usize].next = old;
        if old != NIL {
            self.nodes[old as usize].prev = n;
        }
        self.head = n;
        if self.tail == NIL {
            self.tail = n;
        }
    }

    /// Bytes of RAM used by the bookkeeping (the entries themselves live in the L2P table).
    pub fn resident_bytes(&self) -> usize {
        self.state.capacity()
            + self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.spare.capacity() * 4
            + self.node_of.capacity() * 12
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_order_and_capacity() {
        let mut c = Cmt::new(10, 2);
        for s in [3, 5] {
            c.start_loading(s);
            c.finish_loading(s);
        }
        assert!(!c.over_capacity());
        c.touch(3);
        assert_eq!(c.lru(), Some(5));
        c.start_loading(7);
        assert!(c.over_capacity());
        c.mark_dirty(5);
        c.mark_clean_all(5..6);
        c.evict(5);
        c.finish_loading(7);
        assert_eq!(c.lru(), Some(3));
        assert_eq!(c.cached, 2);
    }

    #[test]
    fn dirty_count_follows_marks_and_nodes_are_reused() {
        let mut c = Cmt::new(100, 3);
        for s in [10, 20, 30] {
            c.start_loading(s);
            c.finish_loading(s);
        }
        c.mark_dirty(20);
        c.mark_dirty(20);
        c.mark_dirty(30);
        assert_eq!(c.dirty_count(), 2);
        c.mark_clean_all(20..21);
        c.mark_clean_all(20..21);
        assert_eq!(c.dirty_count(), 1);
        assert_eq!(c.lru(), Some(10));
        c.evict(10);
        c.evict(20);
        assert_eq!(c.lru(), Some(30));
        for s in [40, 50] {
            c.start_loading(s);
            c.finish_loading(s);
        }
        assert_eq!(c.nodes.len(), 3, "evicted segments' nodes are reused");
        c.touch(30);
        assert_eq!(c.lru(), Some(40));
        c.mark_clean_all(30..31);
        c.evict(40);
        c.evict(50);
        c.evict(30);
        assert_eq!((c.lru(), c.cached, c.dirty_count()), (None, 0, 0));
    }

    #[test]
    fn marking_a_range_clean_says_whether_all_of_it_is_cached() {
        let mut c = Cmt::new(16, 8);
        for s in 4..8 {
            c.start_loading(s);
            c.finish_loading(s);
        }
        c.start_loading(8); // loading is not cached
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
}
