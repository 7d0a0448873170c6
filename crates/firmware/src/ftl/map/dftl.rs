//! DFTL's state beside the CMT: the global translation directory (where each translation page
//! lives on flash) and, for payload stores, the translation pages' contents as last written.

use nand::{BlockIdx, UnitAddr};

use crate::ftl::map::Cmt;

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
    /// Translation pages whose entries GC changed while none of their segments was cached:
    /// the map in DRAM is newer than the page on flash until it is rewritten.
    pub gc_pending: Vec<bool>,
    /// Translation pages marked in `gc_pending`.
    pub pending: u32,
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
            gc_pending: vec![false; tpages as usize],
            pending: 0,
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

    /// Marks translation page `t` as behind the map in DRAM; returns whether it was not yet.
    pub fn set_pending(&mut self, t: u32) -> bool {
        let was = std::mem::replace(&mut self.gc_pending[t as usize], true);
        self.pending += !was as u32;
        !was
    }

    /// Translation page `t` is being rewritten from the map in DRAM.
    pub fn clear_pending(&mut self, t: u32) {
        if std::mem::replace(&mut self.gc_pending[t as usize], false) {
            self.pending -= 1;
        }
    }

    /// The first translation page behind the map in DRAM at or after `from` (wrapping).
    pub fn next_pending(&self, from: u32) -> Option<u32> {
        if self.pending == 0 {
            return None;
        }
        let n = self.gc_pending.len();
        (0..n).map(|k| (from as usize + k) % n).find(|&t| self.gc_pending[t]).map(|t| t as u32)
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
            + self.gc_pending.capacity()
            + self.cmt.resident_bytes()
            + self.on_flash.as_ref().map_or(0, |v| v.capacity() * 4)
    }
}
