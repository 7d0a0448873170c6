//! The logical-to-physical table: where each LPN's current copy lives. Under DFTL this is the
//! union of the cached entries and the translation pages on flash; the simulator keeps the
//! current value of every entry here and lets the CMT decide what a lookup costs.

use nand::{Lpn, UnitAddr};

/// Current location of every LPN (0 = unmapped, else unit address + 1, so a fresh table is
/// zero pages the OS maps lazily).
pub struct L2p {
    cur: Vec<u32>,
}

impl L2p {
    /// A table of `units` unmapped LPNs.
    pub fn new(units: u32) -> Self {
        L2p { cur: vec![0; units as usize] }
    }

    /// Where `lpn` lives.
    pub fn get(&self, lpn: Lpn) -> Option<UnitAddr> {
        self.cur[lpn.idx()].checked_sub(1).map(UnitAddr)
    }

    /// Brings `lpn`'s entry toward the CPU cache ahead of a [`get`](Self::get) or
    /// [`set`](Self::set) (a hint: see [`sim::prefetch`]).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        if let Some(x) = self.cur.get(lpn.idx()) {
            sim::prefetch(x);
        }
    }

    /// Points `lpn` at `new` and returns where it was.
    pub fn set(&mut self, lpn: Lpn, new: Option<UnitAddr>) -> Option<UnitAddr> {
        let old = self.get(lpn);
        self.cur[lpn.idx()] = new.map_or(0, |u| u.0 + 1);
        old
    }

    /// The raw entries of `range` (unit + 1, 0 = unmapped), for translation-page contents.
    pub fn raw(&self, range: std::ops::Range<usize>) -> &[u32] {
        let end = range.end.min(self.cur.len());
        &self.cur[range.start.min(end)..end]
    }

    /// Bytes of RAM used.
    pub fn resident_bytes(&self) -> usize {
        self.cur.capacity() * 4
    }
}
