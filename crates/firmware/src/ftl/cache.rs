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
    prev: u32,
    next: u32,
}

/// The cache.
pub struct DataCache {
    capacity: u32,
    lines: Vec<Line>,
    free: Vec<u32>,
    index: FxHashMap<u32, u32>,
    head: u32,
    tail: u32,
    /// Lines in each state (indexed by `LineState as usize`).
    counts: [u32; 5],
    /// Host reads served from the cache.
    pub hits: u64,
    /// Host reads that went to flash.
    pub misses: u64,
}

impl DataCache {
    /// A cache of `capacity` lines.
    pub fn new(capacity: u32) -> Self {
        DataCache {
            capacity,
            lines: Vec::new(),
            free: Vec::new(),
            index: FxHashMap::default(),
            head: NIL,
            tail: NIL,
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

    /// A line's data, to modify.
    pub fn data_mut(&mut self, i: u32) -> &mut UnitData {
        &mut self.lines[i as usize].data
    }

    /// Sets a line's state.
    pub fn set_state(&mut self, i: u32, st: LineState) {
        let l = &mut self.lines[i as usize];
        self.counts[l.state as usize] -= 1;
        self.counts[st as usize] += 1;
        l.state = st;
    }

    /// Marks a line most recently used.
    pub fn touch(&mut self, i: u32) {
        if self.head != i {
            self.unlink(i);
            self.push_head(i);
        }
    }

    /// Whether a line can be inserted without evicting.
    pub fn has_free(&self) -> bool {
        !self.free.is_empty() || (self.lines.len() as u32) < self.capacity
    }

    /// Inserts a line at the head. The caller ensures there is room.
    pub fn insert(&mut self, lpn: Lpn, state: LineState, data: UnitData) -> u32 {
        let line = Line { lpn, state: LineState::Clean, data, prev: NIL, next: NIL };
        self.counts[LineState::Clean as usize] += 1;
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
        self.set_state(i, state);
        self.index.insert(lpn.0, i);
        self.push_head(i);
        i
    }

    /// Removes a line.
    pub fn remove(&mut self, i: u32) {
        self.set_state(i, LineState::Clean);
        self.counts[LineState::Clean as usize] -= 1;
        self.unlink(i);
        let lpn = self.lines[i as usize].lpn;
        self.index.remove(&lpn.0);
        self.lines[i as usize].data = UnitData::Tag(nand::DataTag(0));
        self.free.push(i);
    }

    /// The least recently used clean line among the `scan` nearest the tail.
    pub fn clean_victim(&self, scan: usize) -> Option<u32> {
        self.tail_first().take(scan).find(|&i| self.lines[i as usize].state == LineState::Clean)
    }

    /// Up to `max` dirty lines, least recently used first, among the `scan` nearest the tail.
    pub fn dirty_near_tail(&self, max: usize, scan: usize) -> Vec<u32> {
        self.tail_first()
            .take(scan)
            .filter(|&i| self.lines[i as usize].state == LineState::Dirty)
            .take(max)
            .collect()
    }

    /// Every dirty line, least recently used first.
    pub fn all_dirty(&self) -> Vec<u32> {
        self.tail_first().filter(|&i| self.lines[i as usize].state == LineState::Dirty).collect()
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

    fn tail_first(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors((self.tail != NIL).then_some(self.tail), |&i| {
            let p = self.lines[i as usize].prev;
            (p != NIL).then_some(p)
        })
    }

    fn unlink(&mut self, i: u32) {
        let (p, n) = (self.lines[i as usize].prev, self.lines[i as usize].next);
        if p != NIL {
            self.lines[p as usize].next = n
        } else {
            self.head = n
        }
        if n != NIL {
            self.lines[n as usize].prev = p
        } else {
            self.tail = p
        }
        self.lines[i as usize].prev = NIL;
        self.lines[i as usize].next = NIL;
    }

    fn push_head(&mut self, i: u32) {
        self.lines[i as usize].prev = NIL;
        self.lines[i as usize].next = self.head;
        if self.head != NIL {
            self.lines[self.head as usize].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
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
    fn lru_victims_and_dirty_accounting() {
        let mut c = DataCache::new(3);
        let t = |v| UnitData::Tag(DataTag(v));
        let a = c.insert(Lpn(1), LineState::Clean, t(1));
        let b = c.insert(Lpn(2), LineState::Dirty, t(2));
        let d = c.insert(Lpn(3), LineState::Clean, t(3));
        assert!(!c.has_free());
        assert_eq!(c.clean_victim(8), Some(a));
        c.touch(a);
        assert_eq!(c.clean_victim(8), Some(d));
        assert_eq!(c.dirty_near_tail(4, 8), vec![b]);
        assert_eq!(c.dirty_count(), 1);
        c.set_state(b, LineState::Writing);
        assert_eq!(c.dirty_count(), 0);
        c.remove(d);
        assert!(c.has_free());
        assert_eq!(c.lookup(Lpn(3)), None);
        let e = c.insert(Lpn(9), LineState::Dirty, t(9));
        assert_eq!(e, d, "freed slots are reused");
        assert_eq!(c.all_dirty(), vec![e]);
    }
}
