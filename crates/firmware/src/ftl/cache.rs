//! The write-back data cache: one line per mapping unit, LRU order, and the line states that
//! order concurrent requests on one unit.
//!
//! ```text
//!   miss ──▶ Filling ──▶ Clean ◀──────────── Writing ◀── Dirty ◀── host write
//!                          │ host write         │ host write
//!                          ▼                    ▼
//!                        Dirty            WritingDirty ──(write-back done)──▶ Dirty
//! ```
//!
//! A line in `Filling` is waited on; a line in `Writing` is being written back (it stays
//! readable, and a host write makes it `WritingDirty` so that it is written again).
//!
//! The lines may be split into *partitions*, one per flow (`ftl.cache.partition`): each has its
//! own capacity and its own clean and dirty LRU lists, and a line is evicted or written back
//! only to make room in its own partition. Shared (the default) is one partition of every line.

use nand::Lpn;
use rustc_hash::FxHashMap;

use crate::ftl::data::UnitData;
use crate::ftl::fdp::Placed;

const NIL: u32 = u32::MAX;

/// A cache line's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LineState {
    /// Being read from flash; wait for it.
    Filling,
    /// Same as flash.
    Clean,
    /// Newer than flash.
    Dirty,
    /// Being written back.
    Writing,
    /// Being written back, and written again by the host since.
    WritingDirty,
}

/// One cached mapping unit.
#[derive(Clone, Debug)]
pub struct Line {
    /// The unit's LPN.
    pub lpn: Lpn,
    /// Its state.
    pub state: LineState,
    /// Its data.
    pub data: UnitData,
    /// The FDP reclaim unit handle (and group) its last host write named (the default without
    /// FDP); it packs into the line's padding.
    pub place: Placed,
    prev: u32,
    next: u32,
}

// A line stays 32 bytes with the placement (the cache holds millions of them).
const _: () = assert!(size_of::<Line>() <= 32);

/// An intrusive doubly-linked LRU list over line indices (head = most recently used).
#[derive(Copy, Clone)]
struct List {
    head: u32,
    tail: u32,
}

const CLEAN: usize = 0;
const DIRTY: usize = 1;

/// One partition: its lines' LRU lists and counts, and its read hits and misses.
#[derive(Clone)]
struct Part {
    capacity: u32,
    /// Lines in use (in any state).
    used: u32,
    lists: [List; 2],
    /// Lines in each state (indexed by `LineState as usize`).
    counts: [u32; 5],
    hits: u64,
    misses: u64,
}

impl Part {
    fn new(capacity: u32) -> Self {
        Part {
            capacity,
            used: 0,
            lists: [List { head: NIL, tail: NIL }; 2],
            counts: [0; 5],
            hits: 0,
            misses: 0,
        }
    }
}

/// A partition's lines by state and its reads, as the report shows them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PartCounts {
    /// Lines it may hold.
    pub capacity: u32,
    /// Lines in `Dirty`.
    pub dirty: u32,
    /// Lines being written back.
    pub writing: u32,
    /// Lines being filled from flash.
    pub filling: u32,
    /// Host reads served from its lines.
    pub hits: u64,
    /// Host reads that missed.
    pub misses: u64,
}

/// The cache. Clean and dirty lines sit on separate LRU lists (one pair per partition), so the
/// eviction victim (the least recently used clean line) and the next write-back (the oldest
/// dirty lines) are found at once; lines in transition are on neither.
pub struct DataCache {
    capacity: u32,
    lines: Vec<Line>,
    /// Each line's partition (beside the lines: a line has no spare byte).
    owner: Vec<u8>,
    /// Each line's flow: the one whose write last dirtied it (its write-back counts for it).
    flow: Vec<crate::fil::FlowTag>,
    free: Vec<u32>,
    index: FxHashMap<u32, u32>,
    parts: Vec<Part>,
    /// Lines in each state (indexed by `LineState as usize`), all partitions.
    counts: [u32; 5],
    /// Host reads served from the cache.
    pub hits: u64,
    /// Host reads that went to flash.
    pub misses: u64,
}

fn list_of(st: LineState) -> Option<usize> {
    match st {
        LineState::Clean => Some(CLEAN),
        LineState::Dirty => Some(DIRTY),
        _ => None,
    }
}

impl DataCache {
    /// A cache of `capacity` lines.
    pub fn new(capacity: u32) -> Self {
        DataCache {
            capacity,
            lines: Vec::new(),
            owner: Vec::new(),
            flow: Vec::new(),
            free: Vec::new(),
            index: FxHashMap::default(),
            parts: vec![Part::new(capacity)],
            counts: [0; 5],
            hits: 0,
            misses: 0,
        }
    }

    /// Splits the lines into partitions of `capacities` lines (their sum at most the cache's
    /// capacity; one partition of every line is the shared cache). Lines already cached are
    /// dealt out in turn, each list least recently used first, to the partitions with room;
    /// lines in transition go the same way after them. Counts of hits and misses restart.
    pub fn partition(&mut self, capacities: &[u32]) {
        assert!(!capacities.is_empty() && capacities.len() <= 256, "1 to 256 partitions");
        assert!(capacities.iter().map(|&c| c as u64).sum::<u64>() <= self.capacity as u64);
        let mut order: Vec<u32> = Vec::with_capacity(self.len() as usize);
        for p in 0..self.parts.len() {
            order.extend(self.iter_from_tail(p, CLEAN));
        }
        for p in 0..self.parts.len() {
            order.extend(self.iter_from_tail(p, DIRTY));
        }
        let listed = order.len();
        let free: rustc_hash::FxHashSet<u32> = self.free.iter().copied().collect();
        order.extend(
            (0..self.lines.len() as u32)
                .filter(|i| !free.contains(i) && list_of(self.lines[*i as usize].state).is_none()),
        );
        assert!(order.len() as u64 <= capacities.iter().map(|&c| c as u64).sum(), "the lines fit");
        self.parts = capacities.iter().map(|&c| Part::new(c)).collect();
        for l in &mut self.lines {
            (l.prev, l.next) = (NIL, NIL);
        }
        let mut next = 0;
        for (k, &i) in order.iter().enumerate() {
            while self.parts[next].used >= self.parts[next].capacity {
                next = (next + 1) % self.parts.len();
            }
            let p = &mut self.parts[next];
            p.used += 1;
            let st = self.lines[i as usize].state;
            p.counts[st as usize] += 1;
            self.owner[i as usize] = next as u8;
            if k < listed {
                self.push_head(next, list_of(st).expect("listed lines are clean or dirty"), i);
            }
            next = (next + 1) % self.parts.len();
        }
    }

    /// Partitions.
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// Partition `p`'s lines and reads.
    pub fn part_counts(&self, p: usize) -> PartCounts {
        let q = &self.parts[p];
        PartCounts {
            capacity: q.capacity,
            dirty: q.counts[LineState::Dirty as usize],
            writing: q.counts[LineState::Writing as usize] + q.counts[LineState::WritingDirty as usize],
            filling: q.counts[LineState::Filling as usize],
            hits: q.hits,
            misses: q.misses,
        }
    }

    /// Counts a host read of partition `p`: served from the cache (`hit`) or not.
    pub fn count_read(&mut self, p: usize, hit: bool) {
        match hit {
            true => (self.hits, self.parts[p].hits) = (self.hits + 1, self.parts[p].hits + 1),
            false => (self.misses, self.parts[p].misses) = (self.misses + 1, self.parts[p].misses + 1),
        }
    }

    /// A line's partition.
    pub fn owner(&self, i: u32) -> usize {
        self.owner[i as usize] as usize
    }

    /// The line holding `lpn`.
    pub fn lookup(&self, lpn: Lpn) -> Option<u32> {
        self.index.get(&lpn.0).copied()
    }

    /// A line.
    pub fn line(&self, i: u32) -> &Line {
        &self.lines[i as usize]
    }

    /// Sets where a line's data goes under FDP (the last host write's placement).
    pub fn set_place(&mut self, i: u32, place: Placed) {
        self.lines[i as usize].place = place;
    }

    /// Sets the flow whose write dirtied a line.
    pub fn set_flow(&mut self, i: u32, flow: crate::fil::FlowTag) {
        self.flow[i as usize] = flow;
    }

    /// The flow whose write last dirtied a line.
    pub fn flow(&self, i: u32) -> crate::fil::FlowTag {
        self.flow[i as usize]
    }

    /// Partition `p`'s dirty lines, least recently used first (to pick a write-back's lines
    /// from).
    pub fn dirty_lru(&self, p: usize) -> impl Iterator<Item = u32> + '_ {
        self.iter_from_tail(p, DIRTY)
    }

    /// A line's data, to modify.
    pub fn data_mut(&mut self, i: u32) -> &mut UnitData {
        &mut self.lines[i as usize].data
    }

    /// Sets a line's state; a line that becomes clean or dirty goes to the most recently used
    /// end of its list.
    pub fn set_state(&mut self, i: u32, st: LineState) {
        self.move_to(i, st, true);
    }

    /// A write-back finished: the line becomes clean at the least recently used end (it was
    /// written back because it was the oldest dirty line).
    pub fn written_back(&mut self, i: u32) {
        self.move_to(i, LineState::Clean, false);
    }

    fn move_to(&mut self, i: u32, st: LineState, at_head: bool) {
        let p = self.owner(i);
        let old = self.lines[i as usize].state;
        if let Some(l) = list_of(old) {
            self.unlink(p, l, i);
        }
        self.counts[old as usize] -= 1;
        self.counts[st as usize] += 1;
        self.parts[p].counts[old as usize] -= 1;
        self.parts[p].counts[st as usize] += 1;
        self.lines[i as usize].state = st;
        if let Some(l) = list_of(st) {
            if at_head { self.push_head(p, l, i) } else { self.push_tail(p, l, i) }
        }
    }

    /// Marks a line most recently used.
    pub fn touch(&mut self, i: u32) {
        let p = self.owner(i);
        if let Some(l) = list_of(self.lines[i as usize].state)
            && self.parts[p].lists[l].head != i
        {
            self.unlink(p, l, i);
            self.push_head(p, l, i);
        }
    }

    /// Lines the cache holds at most.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Lines in use (in any state).
    pub fn len(&self) -> u32 {
        self.lines.len() as u32 - self.free.len() as u32
    }

    /// Whether a line can be inserted into partition `p` without evicting.
    pub fn has_free(&self, p: usize) -> bool {
        self.parts[p].used < self.parts[p].capacity
    }

    /// The first partition with room, if any (for lines that belong to no flow: a
    /// preconditioned or restored cache).
    pub fn any_free(&self) -> Option<usize> {
        (0..self.parts.len()).find(|&p| self.has_free(p))
    }

    /// Inserts a line into partition `p` at the most recently used end. The caller ensures
    /// the partition has room.
    pub fn insert(&mut self, p: usize, lpn: Lpn, state: LineState, data: UnitData) -> u32 {
        assert!(self.has_free(p), "cache insert without room in partition {p}");
        // Enter as Filling (on no list), then move to the real state.
        let line =
            Line { lpn, state: LineState::Filling, data, place: Placed::DEFAULT, prev: NIL, next: NIL };
        let i = match self.free.pop() {
            Some(i) => {
                self.lines[i as usize] = line;
                i
            }
            None => {
                assert!((self.lines.len() as u32) < self.capacity, "cache insert without room");
                self.lines.push(line);
                self.owner.push(0);
                self.flow.push(crate::fil::FlowTag::NONE);
                (self.lines.len() - 1) as u32
            }
        };
        self.owner[i as usize] = p as u8;
        self.flow[i as usize] = crate::fil::FlowTag::NONE;
        self.parts[p].used += 1;
        self.parts[p].counts[LineState::Filling as usize] += 1;
        self.counts[LineState::Filling as usize] += 1;
        self.set_state(i, state);
        self.index.insert(lpn.0, i);
        i
    }

    /// Removes a line.
    pub fn remove(&mut self, i: u32) {
        let p = self.owner(i);
        let st = self.lines[i as usize].state;
        if let Some(l) = list_of(st) {
            self.unlink(p, l, i);
        }
        self.counts[st as usize] -= 1;
        self.parts[p].counts[st as usize] -= 1;
        self.parts[p].used -= 1;
        let lpn = self.lines[i as usize].lpn;
        self.index.remove(&lpn.0);
        self.lines[i as usize].data = UnitData::Tag(nand::DataTag(0));
        self.free.push(i);
    }

    /// Partition `p`'s least recently used clean line.
    pub fn clean_victim(&self, p: usize) -> Option<u32> {
        let t = self.parts[p].lists[CLEAN].tail;
        (t != NIL).then_some(t)
    }

    /// Up to `max` of partition `p`'s dirty lines, least recently used first.
    pub fn oldest_dirty(&self, p: usize, max: usize) -> Vec<u32> {
        self.iter_from_tail(p, DIRTY).take(max).collect()
    }

    /// Every dirty line, least recently used first within each partition.
    pub fn all_dirty(&self) -> Vec<u32> {
        (0..self.parts.len()).flat_map(|p| self.iter_from_tail(p, DIRTY)).collect()
    }

    /// Every clean line, then every dirty line, each least recently used first (partition by
    /// partition): inserting them in this order into an empty shared cache rebuilds both LRU
    /// lists.
    pub fn lines_lru_first(&self) -> impl Iterator<Item = &Line> + '_ {
        let list = move |l| (0..self.parts.len()).flat_map(move |p| self.iter_from_tail(p, l));
        list(CLEAN).chain(list(DIRTY)).map(|i| &self.lines[i as usize])
    }

    /// Lines in `Dirty` (newer than flash, not being written back).
    pub fn dirty_count(&self) -> u32 {
        self.counts[LineState::Dirty as usize]
    }

    /// Lines being written back (`Writing` or `WritingDirty`).
    pub fn writing_count(&self) -> u32 {
        self.counts[LineState::Writing as usize] + self.counts[LineState::WritingDirty as usize]
    }

    /// Lines being filled from flash.
    pub fn filling_count(&self) -> u32 {
        self.counts[LineState::Filling as usize]
    }

    fn iter_from_tail(&self, p: usize, l: usize) -> impl Iterator<Item = u32> + '_ {
        let t = self.parts[p].lists[l].tail;
        std::iter::successors((t != NIL).then_some(t), |&i| {
            let p = self.lines[i as usize].prev;
            (p != NIL).then_some(p)
        })
    }

    fn unlink(&mut self, part: usize, l: usize, i: u32) {
        let list = &mut self.parts[part].lists[l];
        let (p, n) = (self.lines[i as usize].prev, self.lines[i as usize].next);
        if p != NIL {
            self.lines[p as usize].next = n
        } else {
            list.head = n
        }
        if n != NIL {
            self.lines[n as usize].prev = p
        } else {
            list.tail = p
        }
        self.lines[i as usize].prev = NIL;
        self.lines[i as usize].next = NIL;
    }

    fn push_head(&mut self, part: usize, l: usize, i: u32) {
        let list = &mut self.parts[part].lists[l];
        let head = list.head;
        self.lines[i as usize].prev = NIL;
        self.lines[i as usize].next = head;
        if head != NIL {
            self.lines[head as usize].prev = i;
        }
        list.head = i;
        if list.tail == NIL {
            list.tail = i;
        }
    }

    fn push_tail(&mut self, part: usize, l: usize, i: u32) {
        let list = &mut self.parts[part].lists[l];
        let tail = list.tail;
        self.lines[i as usize].next = NIL;
        self.lines[i as usize].prev = tail;
        if tail != NIL {
            self.lines[tail as usize].next = i;
        }
        list.tail = i;
        if list.head == NIL {
            list.head = i;
        }
    }

    /// Bytes of RAM used (lines, index, payloads).
    pub fn resident_bytes(&self, unit_bytes: usize) -> usize {
        let payload = self.lines.iter().filter(|l| matches!(l.data, UnitData::Bytes(_))).count() * unit_bytes;
        self.lines.capacity() * size_of::<Line>()
            + self.owner.capacity()
            + self.index.capacity() * 12
            + payload
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nand::DataTag;

    #[test]
    fn clean_and_dirty_lists_give_victims_in_lru_order() {
        let mut c = DataCache::new(3);
        let t = |v| UnitData::Tag(DataTag(v));
        let a = c.insert(0, Lpn(1), LineState::Clean, t(1));
        let b = c.insert(0, Lpn(2), LineState::Dirty, t(2));
        let d = c.insert(0, Lpn(3), LineState::Clean, t(3));
        assert!(!c.has_free(0));
        assert_eq!(c.clean_victim(0), Some(a));
        c.touch(a);
        assert_eq!(c.clean_victim(0), Some(d));
        assert_eq!(c.oldest_dirty(0, 4), vec![b]);
        assert_eq!(c.dirty_count(), 1);
        c.set_state(b, LineState::Writing);
        assert_eq!((c.dirty_count(), c.writing_count()), (0, 1));
        assert!(c.oldest_dirty(0, 4).is_empty());
        c.written_back(b);
        assert_eq!(c.clean_victim(0), Some(b), "a written-back line is the next to go");
        c.remove(d);
        assert!(c.has_free(0));
        assert_eq!(c.lookup(Lpn(3)), None);
        let e = c.insert(0, Lpn(9), LineState::Dirty, t(9));
        assert_eq!(e, d, "freed slots are reused");
        assert_eq!(c.all_dirty(), vec![e]);
    }

    #[test]
    fn a_partition_evicts_and_writes_back_only_its_own_lines() {
        let mut c = DataCache::new(6);
        c.partition(&[2, 4]);
        let t = |v| UnitData::Tag(DataTag(v));
        let a = c.insert(0, Lpn(1), LineState::Clean, t(1));
        let b = c.insert(0, Lpn(2), LineState::Dirty, t(2));
        assert!(!c.has_free(0) && c.has_free(1), "partition 0 is full, 1 is not");
        for l in 10..14 {
            c.insert(1, Lpn(l), LineState::Clean, t(l as u16));
        }
        assert!(!c.has_free(1));
        assert_eq!(c.clean_victim(0), Some(a), "partition 0's victim is its own line");
        assert_eq!(c.line(c.clean_victim(1).unwrap()).lpn, Lpn(10));
        assert_eq!(c.oldest_dirty(0, 4), vec![b]);
        assert!(c.oldest_dirty(1, 4).is_empty());
        c.remove(a);
        assert!(c.has_free(0) && !c.has_free(1), "a freed line goes back to its partition");
        c.count_read(1, true);
        c.count_read(1, false);
        c.count_read(0, false);
        let (p0, p1) = (c.part_counts(0), c.part_counts(1));
        assert_eq!((p0.capacity, p0.dirty, p0.hits, p0.misses), (2, 1, 0, 1));
        assert_eq!((p1.capacity, p1.dirty, p1.hits, p1.misses), (4, 0, 1, 1));
        assert_eq!((c.hits, c.misses), (1, 2));
    }

    #[test]
    fn partitioning_a_full_cache_deals_its_lines_out_in_lru_order() {
        let mut c = DataCache::new(4);
        let t = |v| UnitData::Tag(DataTag(v));
        for l in 0..3 {
            c.insert(0, Lpn(l), LineState::Clean, t(l as u16));
        }
        let f = c.insert(0, Lpn(3), LineState::Filling, t(3));
        c.partition(&[2, 2]);
        let (p0, p1) = (c.part_counts(0), c.part_counts(1));
        assert_eq!((p0.filling + p1.filling, c.len()), (1, 4));
        assert!(!c.has_free(0) && !c.has_free(1));
        // Clean lines 0, 1, 2 (least recently used first) went to 0, 1, 0; the filling line to 1.
        assert_eq!(c.owner(f), 1);
        assert_eq!(c.line(c.clean_victim(0).unwrap()).lpn, Lpn(0));
        assert_eq!(c.line(c.clean_victim(1).unwrap()).lpn, Lpn(1));
        c.partition(&[4]);
        assert_eq!(c.lines_lru_first().map(|l| l.lpn.0).collect::<Vec<_>>(), vec![0, 2, 1]);
    }
}
