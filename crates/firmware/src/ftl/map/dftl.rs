//! DFTL's state beside the CMT: the global translation directory (where each translation page
//! lives on flash) and, for payload stores, the translation pages' contents as last written.

use std::collections::BTreeSet;

use nand::{BlockIdx, UnitAddr};

use crate::ftl::map::Cmt;

/// DRAM one pending mapping update takes: the LPN and its new address, 4 bytes each.
pub const PENDING_ENTRY_BYTES: u64 = 8;

/// DFTL bookkeeping.
pub struct Dftl {
    /// Mapping entries per translation page (page size / 4).
    pub entries_per_tpage: u32,
    /// Entries per CMT segment.
    pub segment_entries: u32,
    /// The cached mapping table.
    pub cmt: Cmt,
    /// Global translation directory: location of each translation page (0 = never written).
    gtd: Vec<u32>,
    /// Translation pages being rewritten.
    pub writing: Vec<bool>,
    /// Per translation page: the updates GC made to its entries while none of their segments
    /// was cached, held in DRAM (the map there is newer than the page on flash) until the page
    /// is rewritten.
    gc_pending: Vec<u32>,
    /// The translation pages with pending updates, in index order (the flusher takes them in
    /// turn).
    pending_pages: BTreeSet<u32>,
    /// Pending updates in all (each an entry of DRAM: the LPN and its new address).
    pub pending_updates: u64,
    /// The most pending updates held at once by timed GC.
    pub pending_high: u64,
    /// Pending updates the DRAM budget holds (`mapping.pending`, in 8-byte entries).
    pub pending_budget: u64,
    /// Translation-page contents as last programmed (kept for payload stores and checks).
    pub on_flash: Option<Vec<u32>>,
    /// Translation pages read (misses and read-modify-write).
    pub tpage_reads: u64,
    /// Translation pages written.
    pub tpage_writes: u64,
    segments: u32,
    /// Per erase block: the translation pages the directory places there. GC weighs them as
    /// whole pages (each is moved into a page of its own), not as the one unit they count as.
    per_block: Vec<u32>,
    units_per_block: u32,
}

impl Dftl {
    /// DFTL over `logical` LPNs with translation pages the size of `geo`'s pages, caching
    /// `cmt_bytes` of 8-byte entries in segments of `segment_entries`.
    pub fn new(
        logical: u32,
        geo: &nand::Geometry,
        cmt_bytes: u64,
        segment_entries: u32,
        pending_bytes: u64,
        keep_contents: bool,
    ) -> Self {
        let page_bytes = geo.page_bytes();
        let entries_per_tpage = page_bytes / 4;
        let tpages = logical.div_ceil(entries_per_tpage);
        let segments = logical.div_ceil(segment_entries);
        let capacity = ((cmt_bytes / 8) / segment_entries as u64).max(1).min(segments as u64) as u32;
        Dftl {
            entries_per_tpage,
            segment_entries,
            cmt: Cmt::new(segments, capacity),
            gtd: vec![0; tpages as usize],
            writing: vec![false; tpages as usize],
            gc_pending: vec![0; tpages as usize],
            pending_pages: BTreeSet::new(),
            pending_updates: 0,
            pending_high: 0,
            pending_budget: pending_bytes / PENDING_ENTRY_BYTES,
            on_flash: keep_contents.then(|| vec![0; (tpages * entries_per_tpage) as usize]),
            tpage_reads: 0,
            tpage_writes: 0,
            segments,
            per_block: vec![0; geo.total_blocks() as usize],
            units_per_block: geo.units_per_block(),
        }
    }

    /// Translation pages.
    pub fn tpages(&self) -> u32 {
        self.gtd.len() as u32
    }

    /// Where translation page `t` lives.
    pub fn location(&self, t: u32) -> Option<UnitAddr> {
        self.gtd[t as usize].checked_sub(1).map(UnitAddr)
    }

    /// Records translation page `t` at `u`; returns where it was.
    pub fn relocate(&mut self, t: u32, u: UnitAddr) -> Option<UnitAddr> {
        let old = self.location(t);
        self.gtd[t as usize] = u.0 + 1;
        if let Some(o) = old {
            self.per_block[(o.0 / self.units_per_block) as usize] -= 1;
        }
        self.per_block[(u.0 / self.units_per_block) as usize] += 1;
        old
    }

    /// The translation pages the directory places in `block`.
    pub fn tpages_in(&self, block: BlockIdx) -> u32 {
        self.per_block[block.idx()]
    }

    /// Brings what a lookup or remap of `lpn` touches at random toward the CPU cache: its
    /// segment's CMT state and its translation page's count of pending updates (a hint: see
    /// [`sim::prefetch`]).
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        let seg = self.segment_of(lpn);
        self.cmt.prefetch(seg);
        if let Some(n) = self.gc_pending.get(self.tpage_of_segment(seg) as usize) {
            sim::prefetch(n);
        }
    }

    /// GC updated an entry of translation page `t` that is not cached: the update is held in
    /// DRAM until the page is rewritten. Returns whether `t` had none pending before.
    pub fn set_pending(&mut self, t: u32) -> bool {
        let n = &mut self.gc_pending[t as usize];
        *n += 1;
        self.pending_updates += 1;
        *n == 1 && self.pending_pages.insert(t)
    }

    /// Whether translation page `t` has updates pending (the map in DRAM is newer than it).
    pub fn is_pending(&self, t: u32) -> bool {
        self.gc_pending[t as usize] > 0
    }

    /// Translation page `t` is being rewritten from the map in DRAM: its pending updates are
    /// no longer needed.
    pub fn clear_pending(&mut self, t: u32) {
        let n = std::mem::take(&mut self.gc_pending[t as usize]);
        if n > 0 {
            self.pending_updates -= n as u64;
            self.pending_pages.remove(&t);
        }
    }

    /// Translation pages with updates pending.
    pub fn pending_pages(&self) -> u32 {
        self.pending_pages.len() as u32
    }

    /// The first translation page with updates pending at or after `from` (wrapping) that is
    /// not being rewritten already (a rewrite in progress holds its page until it has room to
    /// program it, which may be the room the caller is making).
    pub fn next_pending(&self, from: u32) -> Option<u32> {
        let mut after = self.pending_pages.range(from..).chain(self.pending_pages.range(..from));
        after.find(|&&t| !self.writing[t as usize]).copied()
    }

    /// Counts the pending updates now toward the high-water mark.
    pub fn note_pending_high(&mut self) {
        self.pending_high = self.pending_high.max(self.pending_updates);
    }

    /// The segment holding `lpn`.
    pub fn segment_of(&self, lpn: u32) -> u32 {
        lpn / self.segment_entries
    }

    /// The translation page holding segment `seg`.
    pub fn tpage_of_segment(&self, seg: u32) -> u32 {
        seg * self.segment_entries / self.entries_per_tpage
    }

    /// The segments of translation page `t`.
    pub fn segments_of(&self, t: u32) -> std::ops::Range<u32> {
        let per = self.entries_per_tpage / self.segment_entries;
        (t * per).min(self.segments)..((t + 1) * per).min(self.segments)
    }

    /// Bytes of RAM used (directory, CMT bookkeeping, kept contents).
    pub fn resident_bytes(&self) -> usize {
        self.gtd.capacity() * 4
            + self.writing.capacity()
            + self.gc_pending.capacity() * 4
            + self.pending_pages.len() * 8
            + self.cmt.resident_bytes()
            + self.on_flash.as_ref().map_or(0, |v| v.capacity() * 4)
    }
}
