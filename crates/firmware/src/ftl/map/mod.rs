//! The FTL's mapping part: the logical-to-physical table, and under DFTL the cached mapping
//! table (CMT) and the global translation directory. This part owns the mapping's state and
//! answers from it without waiting; the flows that wait for flash (loading a segment on a
//! miss, writing translation pages back, the flusher) are the FTL's (`ftl/mapping.rs`), which
//! owns the flash access they need.
//!
//! The scheme is the seam a new mapping plugs into: the full map in DRAM needs nothing to use
//! an entry; DFTL must have the entry's segment cached (a translation-page read on a miss) and
//! writes dirty segments back. A zone map would be a third.

mod cmt;
mod dftl;
mod segmap;
mod table;

use std::cell::{Cell, RefCell};

use nand::{Lpn, UnitAddr};

pub use cmt::Cmt;
pub use dftl::{Dftl, PENDING_ENTRY_BYTES};
pub use table::L2p;

use crate::ftl::config::{MappingConfig, default_pending};

/// The mapping's state.
pub(crate) struct Mapping {
    /// Where every LPN's current copy lives.
    pub l2p: RefCell<L2p>,
    /// DFTL's CMT and directory; `None` with the full map in DRAM.
    pub dftl: Option<RefCell<Dftl>>,
    /// The mapping flusher (rewriting translation pages GC left behind) is running.
    pub flusher: Cell<bool>,
    /// Where GC looks for the next translation page to rewrite when the pending updates'
    /// budget is full.
    pub gc_flush_from: Cell<u32>,
}

/// What [`Mapping::gc_remap`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Remap {
    /// The host rewrote or trimmed the unit meanwhile: the map is unchanged.
    Stale,
    /// The map points at the new copy.
    Done,
    /// The map points at the new copy, and the pending updates fill more than half their
    /// budget: the flusher should start.
    DoneStartFlusher,
}

impl Mapping {
    /// The mapping `cfg` configures for `logical` units, translation pages the size of `geo`'s
    /// pages (their contents kept when `payload`).
    pub fn new(cfg: &MappingConfig, logical: u32, geo: &nand::Geometry, payload: bool) -> Mapping {
        let dftl = match cfg {
            MappingConfig::Dftl { cmt, segment_entries, pending, .. } => {
                // Unresolved (no controller DRAM to fit in): the default's own size.
                let pending = pending.map_or_else(|| default_pending(logical, geo), |p| p.bytes());
                Some(RefCell::new(Dftl::new(logical, geo, cmt.bytes(), *segment_entries, pending, payload)))
            }
            MappingConfig::Full => None,
        };
        Mapping {
            l2p: RefCell::new(L2p::new(logical)),
            dftl,
            flusher: Cell::new(false),
            gc_flush_from: Cell::new(0),
        }
    }

    /// Where `lpn` lives now (the table alone: whether its entry is cached is not looked at).
    pub fn get(&self, lpn: Lpn) -> Option<UnitAddr> {
        self.l2p.borrow().get(lpn)
    }

    /// Brings what looking `lpn` up touches (its entry; under DFTL its segment's state) toward
    /// the CPU cache, ahead of a remap or update some work later (a hint: see
    /// [`sim::prefetch`]).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        self.l2p.borrow().prefetch(lpn);
        if let Some(d) = &self.dftl {
            d.borrow().prefetch(lpn.0);
        }
    }

    /// The host changed `lpn`'s entry (cached): its segment is newer than flash.
    pub fn mark_dirty(&self, lpn: Lpn) {
        if let Some(d) = &self.dftl {
            let mut d = d.borrow_mut();
            let seg = d.segment_of(lpn.0);
            d.cmt.mark_dirty(seg);
        }
    }

    /// GC moved `lpn` from `expected` to `new`: points the table there unless the host rewrote
    /// or trimmed it meanwhile. Never waits: an entry whose segment is not cached is changed
    /// in DRAM and its translation page marked behind (one rewrite covers every change GC
    /// makes to that page meanwhile), up to the DRAM budget GC keeps to (see
    /// `FtlInner::make_pending_room`). `quiet`: do not ask for the flusher (the device is being
    /// brought to rest).
    pub fn gc_remap(&self, lpn: Lpn, expected: UnitAddr, new: UnitAddr, quiet: bool) -> Remap {
        let mut l2p = self.l2p.borrow_mut();
        if l2p.get(lpn) != Some(expected) {
            return Remap::Stale;
        }
        l2p.set(lpn, Some(new));
        drop(l2p);
        let Some(dftl) = &self.dftl else { return Remap::Done };
        let mut d = dftl.borrow_mut();
        let seg = d.segment_of(lpn.0);
        if d.cmt.is_cached(seg) {
            d.cmt.mark_dirty(seg);
        } else {
            let t = d.tpage_of_segment(seg);
            d.set_pending(t);
            if !quiet {
                d.note_pending_high();
                if d.pending_updates > d.pending_budget / 2 && !self.flusher.get() {
                    return Remap::DoneStartFlusher;
                }
            }
        }
        Remap::Done
    }

    /// (hits, misses) of the cached mapping table (`None` with the full map in DRAM).
    pub fn cmt_hits(&self) -> Option<(u64, u64)> {
        self.dftl.as_ref().map(|d| {
            let d = d.borrow();
            d.cmt.lookups()
        })
    }

    /// Logical units currently mapped.
    pub fn mapped_units(&self, logical: u32) -> u64 {
        let l2p = self.l2p.borrow();
        (0..logical).filter(|&l| l2p.get(Lpn(l)).is_some()).count() as u64
    }

    /// Mapping segments in DRAM newer than their translation page (DFTL).
    pub fn dirty_segments(&self) -> u64 {
        self.dftl.as_ref().map_or(0, |d| d.borrow().cmt.dirty_count() as u64)
    }

    /// Bytes of RAM the mapping's tables occupy.
    pub fn resident_bytes(&self) -> usize {
        self.l2p.borrow().resident_bytes() + self.dftl.as_ref().map_or(0, |d| d.borrow().resident_bytes())
    }
}
