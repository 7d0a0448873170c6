//! The cached mapping table (CMT): which segments of mapping entries are in DRAM, in LRU
//! order, and which are dirty. A segment is `segment_entries` consecutive LPNs; classic DFTL is
//! one entry per segment.

/// Links hold segment + 1, so that 0 means "none" and a fresh list is zero pages the OS maps
/// lazily (classic DFTL keeps one entry per logical page).
const NIL: u32 = 0;
const CACHED: u8 = 1;
const DIRTY: u8 = 2;
const LOADING: u8 = 4;

/// Segment states and an intrusive LRU list (head = most recently used).
pub struct Cmt {
    capacity: u32,
    cached: u32,
    loading: u32,
    state: Vec<u8>,
    prev: Vec<u32>,
    next: Vec<u32>,
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
        let n = segments as usize;
        Cmt {
            capacity,
            cached: 0,
            loading: 0,
            state: vec![0; n],
            prev: vec![NIL; n],
            next: vec![NIL; n],
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
        if self.head != seg + 1 {
            self.unlink(seg);
            self.push_head(seg);
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
        self.push_head(seg);
    }

    /// Marks a cached segment dirty.
    pub fn mark_dirty(&mut self, seg: u32) {
        debug_assert!(self.is_cached(seg));
        self.state[seg as usize] |= DIRTY;
    }

    /// Marks a segment clean (its translation page is being written).
    pub fn mark_clean(&mut self, seg: u32) {
        self.state[seg as usize] &= !DIRTY;
    }

    /// Cached segments that are dirty.
    pub fn dirty_count(&self) -> usize {
        self.state.iter().filter(|&&s| s & DIRTY != 0).count()
    }

    /// The least recently used cached segment.
    pub fn lru(&self) -> Option<u32> {
        (self.tail != NIL).then(|| self.tail - 1)
    }

    /// Drops a clean cached segment.
    pub fn evict(&mut self, seg: u32) {
        debug_assert!(self.is_cached(seg) && !self.is_dirty(seg));
        self.unlink(seg);
        self.state[seg as usize] = 0;
        self.cached -= 1;
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p != NIL {
            self.next[p as usize - 1] = n
        } else {
            self.head = n
        }
        if n != NIL {
            self.prev[n as usize - 1] = p
        } else {
            self.tail = p
        }
        self.prev[s as usize] = NIL;
        self.next[s as usize] = NIL;
    }

    fn push_head(&mut self, s: u32) {
        self.prev[s as usize] = NIL;
        self.next[s as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize - 1] = s + 1;
        }
        self.head = s + 1;
        if self.tail == NIL {
            self.tail = s + 1;
        }
    }

    /// Bytes of RAM used by the bookkeeping (the entries themselves live in the L2P table).
    pub fn resident_bytes(&self) -> usize {
        self.state.capacity() + (self.prev.capacity() + self.next.capacity()) * 4
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
        c.mark_clean(5);
        c.evict(5);
        c.finish_loading(7);
        assert_eq!(c.lru(), Some(3));
        assert_eq!(c.cached, 2);
    }
}
