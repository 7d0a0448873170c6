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

/// The cache. Clean and dirty lines sit on separate LRU lists, so the eviction victim (the
/// least recently used clean line) and the next write-back (the oldest dirty lines) are found
/// at once; lines in transition are on neither.
pub struct DataCache {
    capacity: u32,
    lines: Vec<Line>,
    free: Vec<u32>,
    index: FxHashMap<u32, u32>,
    lists: [List; 2],
    /// Lines in each state (indexed by `LineState as usize`).
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
            free: Vec::new(),
            index: FxHashMap::default(),
            lists: [List { head: NIL, tail: NIL }; 2],
            counts: [0; 5],
            hits: 0,
            misses: 0,
        }
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

    /// Dirty lines, least recently used first (to pick a write-back's lines from).
    pub fn dirty_lru(&self) -> impl Iterator<Item = u32> + '_ {
        self.iter_from_tail(DIRTY)
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
        let old = self.lines[i as usize].state;
        if let Some(l) = list_of(old) {
            self.unlink(l, i);
        }
        self.counts[old as usize] -= 1;
        self.counts[st as usize] += 1;
        self.lines[i as usize].state = st;
        if let Some(l) = list_of(st) {
            if at_head { self.push_head(l, i) } else { self.push_tail(l, i) }
        }
    }

    /// Marks a line most recently used.
    pub fn touch(&mut self, i: u32) {
        if let Some(l) = list_of(self.lines[i as usize].state)
            && self.lists[l].head != i
        {
            self.unlink(l, i);
            self.push_head(l, i);
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

    /// Whether a line can be inserted without evicting.
    pub fn has_free(&self) -> bool {
        !self.free.is_empty() || (self.lines.len() as u32) < self.capacity
    }

    /// Inserts a line at the most recently used end. The caller ensures there is room.
    pub fn insert(&mut self, lpn: Lpn, state: LineState, data: UnitData) -> u32 {
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
                (self.lines.len() - 1) as u32
            }
        };
        self.counts[LineState::Filling as usize] += 1;
        self.set_state(i, state);
        self.index.insert(lpn.0, i);
        i
    }

    /// Removes a line.
    pub fn remove(&mut self, i: u32) {
        let st = self.lines[i as usize].state;
        if let Some(l) = list_of(st) {
            self.unlink(l, i);
        }
        self.counts[st as usize] -= 1;
        let lpn = self.lines[i as usize].lpn;
        self.index.remove(&lpn.0);
        self.lines[i as usize].data = UnitData::Tag(nand::DataTag(0));
        self.free.push(i);
    }

    /// The least recently used clean line.
    pub fn clean_victim(&self) -> Option<u32> {
        let t = self.lists[CLEAN].tail;
        (t != NIL).then_some(t)
    }

    /// Up to `max` dirty lines, least recently used first.
    pub fn oldest_dirty(&self, max: usize) -> Vec<u32> {
        self.iter_from_tail(DIRTY).take(max).collect()
    }

    /// Every dirty line, least recently used first.
    pub fn all_dirty(&self) -> Vec<u32> {
        self.iter_from_tail(DIRTY).collect()
    }

    /// Every clean line, then every dirty line, each least recently used first: inserting them
    /// in this order into an empty cache rebuilds both LRU lists.
    pub fn lines_lru_first(&self) -> impl Iterator<Item = &Line> + '_ {
        self.iter_from_tail(CLEAN).chain(self.iter_from_tail(DIRTY)).map(|i| &self.lines[i as usize])
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

    fn iter_from_tail(&self, l: usize) -> impl Iterator<Item = u32> + '_ {
        let t = self.lists[l].tail;
        std::iter::successors((t != NIL).then_some(t), |&i| {
            let p = self.lines[i as usize].prev;
            (p != NIL).then_some(p)
        })
    }

    fn unlink(&mut self, l: usize, i: u32) {
        let (p, n) = (self.lines[i as usize].prev, self.lines[i as usize].next);
        if p != NIL {
            self.lines[p as usize].next = n
        } else {
            self.lists[l].head = n
        }
        if n != NIL {
            self.lines[n as usize].prev = p
        } else {
            self.lists[l].tail = p
        }
        self.lines[i as usize].prev = NIL;
        self.lines[i as usize].next = NIL;
    }

    fn push_head(&mut self, l: usize, i: u32) {
        let head = self.lists[l].head;
        self.lines[i as usize].prev = NIL;
        self.lines[i as usize].next = head;
        if head != NIL {
            self.lines[head as usize].prev = i;
        }
        self.lists[l].head = i;
        if self.lists[l].tail == NIL {
            self.lists[l].tail = i;
        }
    }

    fn push_tail(&mut self, l: usize, i: u32) {
        let tail = self.lists[l].tail;
        self.lines[i as usize].next = NIL;
        self.lines[i as usize].prev = tail;
        if tail != NIL {
            self.lines[tail as usize].next = i;
        }
        self.lists[l].tail = i;
        if self.lists[l].head == NIL {
            self.lists[l].head = i;
        }
    }

    /// Bytes of RAM used (lines, index, payloads).
    pub fn resident_bytes(&self, unit_bytes: usize) -> usize {
        let payload = self.lines.iter().filter(|l| matches!(l.data, UnitData::Bytes(_))).count() * unit_bytes;
        self.lines.capacity() * size_of::<Line>() + self.index.capacity() * 12 + payload
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
        let a = c.insert(Lpn(1), LineState::Clean, t(1));
        let b = c.insert(Lpn(2), LineState::Dirty, t(2));
        let d = c.insert(Lpn(3), LineState::Clean, t(3));
        assert!(!c.has_free());
        assert_eq!(c.clean_victim(), Some(a));
        c.touch(a);
        assert_eq!(c.clean_victim(), Some(d));
        assert_eq!(c.oldest_dirty(4), vec![b]);
        assert_eq!(c.dirty_count(), 1);
        c.set_state(b, LineState::Writing);
        assert_eq!((c.dirty_count(), c.writing_count()), (0, 1));
        assert!(c.oldest_dirty(4).is_empty());
        c.written_back(b);
        assert_eq!(c.clean_victim(), Some(b), "a written-back line is the next to go");
        c.remove(d);
        assert!(c.has_free());
        assert_eq!(c.lookup(Lpn(3)), None);
        let e = c.insert(Lpn(9), LineState::Dirty, t(9));
        assert_eq!(e, d, "freed slots are reused");
        assert_eq!(c.all_dirty(), vec![e]);
    }
}
