//! Mapping flows: lookups and updates through the cached mapping table, loading segments on a
//! miss and writing translation pages back (batched per page) when dirty segments are evicted.
//! With the full map in DRAM these are plain table operations.

use nand::{DataTag, Lpn, Oob, OobSlot, UnitAddr};
use sim::SimDuration;

use crate::flow::{Point, Table};

use crate::fil::{FlashRequest, FlowTag, PageWrite, TxnSource};
use crate::ftl::blocks::Stream;
use crate::ftl::config::TRANSLATION_LPN_BASE;
use crate::ftl::map::Remap;
use crate::ftl::state::FtlInner;
use crate::ftl::waits::WaitKey;

impl FtlInner {
    /// Where `lpn` lives, looked up for `flow` (its CMT partition, if the CMT is split), with
    /// the mapping table's lock (if the architecture has one) held for the lookup; also the
    /// time spent getting the lock.
    pub async fn map_lookup(&self, lpn: Lpn, flow: FlowTag) -> (Option<UnitAddr>, SimDuration) {
        self.cmt_ensure(lpn, flow, true).await;
        let waited = self.lock(Table::Mapping, Point::Translate).await;
        let u = self.map.get(lpn);
        self.unlock(Table::Mapping);
        (u, waited)
    }

    /// Points `lpn` at `new` for `flow` and returns its previous location.
    pub async fn map_set(&self, lpn: Lpn, new: Option<UnitAddr>, flow: FlowTag) -> Option<UnitAddr> {
        self.map_update(lpn, new, flow, true).await
    }

    /// [`map_set`](Self::map_set); `lookup` says whether finding the entry cached counts as a
    /// CMT hit (not after [`cmt_prefetch`](Self::cmt_prefetch) counted the miss).
    pub async fn map_update(
        &self,
        lpn: Lpn,
        new: Option<UnitAddr>,
        flow: FlowTag,
        lookup: bool,
    ) -> Option<UnitAddr> {
        self.cmt_ensure(lpn, flow, lookup).await;
        self.lock(Table::Mapping, Point::Translate).await;
        self.map.mark_dirty(lpn);
        let old = self.map.l2p.borrow_mut().set(lpn, new);
        self.unlock(Table::Mapping);
        old
    }

    /// GC moved `lpn` from `expected` to `new`: points the map there unless the host rewrote
    /// or trimmed it meanwhile (returns whether it did), and starts the mapping flusher when
    /// the first translation page falls behind the map in DRAM (see [`Mapping::gc_remap`]).
    ///
    /// [`Mapping::gc_remap`]: crate::ftl::map::Mapping::gc_remap
    pub fn gc_remap(&self, lpn: Lpn, expected: UnitAddr, new: UnitAddr) -> bool {
        match self.map.gc_remap(lpn, expected, new, self.quiescing.get()) {
            Remap::Stale => false,
            Remap::Done => true,
            Remap::DoneStartFlusher => {
                self.start_mapping_flusher();
                true
            }
        }
    }

    /// Rewrites translation pages GC left behind the map in DRAM, one at a time, in index
    /// order, until the pending updates are down to a quarter of their budget (started at half
    /// of it, it lets updates to a page gather before one rewrite takes them all), or, while
    /// the FTL is idle, until none is left, as idle firmware would.
    fn start_mapping_flusher(&self) {
        self.map.flusher.set(true);
        let me = self.self_rc();
        self.cx.spawn(self.core, "mapping flusher", async move {
            let dftl = me.map.dftl.as_ref().expect("DFTL");
            let mut from = 0;
            while !me.quiescing.get() {
                let next = {
                    let d = dftl.borrow();
                    if d.pending_updates <= d.pending_budget / 4 && !me.idle() {
                        break;
                    }
                    d.next_pending(from)
                };
                let Some(t) = next else { break };
                me.tpage_write(t, None).await;
                from = t + 1;
            }
            me.map.flusher.set(false);
        });
    }

    /// No background write-back and no GC in flight: the FTL is idle (host reads aside).
    fn idle(&self) -> bool {
        self.wb.flushing.get() == 0 && !self.gc.active.borrow().iter().any(|&a| a)
    }

    /// Starts the flusher to rewrite every pending translation page if the FTL has just gone
    /// idle with some left (called when a GC task or a write-back ends).
    pub(crate) fn maybe_drain_pending(&self) {
        let Some(dftl) = &self.map.dftl else { return };
        if dftl.borrow().pending_pages() > 0
            && !self.map.flusher.get()
            && !self.quiescing.get()
            && self.idle()
        {
            self.start_mapping_flusher();
        }
    }

    /// GC is about to point `units` more entries at their new copies. Past half the pending
    /// updates' DRAM budget GC pays for them as it goes, rewriting one pending translation page
    /// per page it moves; where the new ones would not fit, as many as it takes. It writes them
    /// into its own frontier in `plane` (GC never waits for space it is making), in index
    /// order, but never into the plane's last free block: where a collection's translation
    /// pages would cost more space than it regains (a budget too small for the device's
    /// over-provisioning), the updates overflow the budget instead of GC eating the plane's
    /// last block, and the high-water mark shows it. Not while the device is being brought to
    /// rest (the pages are written untimed then).
    pub(crate) async fn make_pending_room(&self, plane: u32, units: u64) {
        let Some(dftl) = &self.map.dftl else { return };
        let mut first = true;
        loop {
            let next = {
                let d = dftl.borrow();
                let fits = d.pending_updates + units <= d.pending_budget;
                let past_half = d.pending_updates > d.pending_budget / 2;
                if self.quiescing.get() || fits && !(first && past_half) || !self.gc_has_room_to_spare(plane)
                {
                    return;
                }
                d.next_pending(self.map.gc_flush_from.get())
            };
            let Some(t) = next else { return };
            first = false;
            self.map.gc_flush_from.set(t + 1);
            self.stats.borrow_mut().gc_tpage_writes += 1;
            self.tpage_write(t, Some(plane)).await;
        }
    }

    /// Whether GC in `plane` can program a page without its frontier taking the plane's last
    /// free block.
    fn gc_has_room_to_spare(&self, plane: u32) -> bool {
        self.alloc.borrow().pages_left(Stream::Gc, plane) > 1 || self.blocks.borrow().free_count(plane) > 1
    }

    /// Counts a lookup of `lpn`'s entry by `flow` and, unless its segment is cached or on its
    /// way, starts loading it in a task of its own (no-op for the full map): a write-back
    /// overlaps its translation-page reads with its programs, then updates the entry without
    /// counting the lookup again.
    pub(crate) fn cmt_prefetch(&self, lpn: Lpn, flow: FlowTag) {
        let Some(dftl) = &self.map.dftl else { return };
        let needed = {
            let mut d = dftl.borrow_mut();
            let seg = d.segment_of(lpn.0);
            let present = d.cmt.is_cached(seg) || d.cmt.is_loading(seg);
            if present {
                d.cmt.count(flow, true);
            }
            !present
        };
        if needed {
            let me = self.self_rc();
            self.cx.spawn(self.core, "mapping prefetch", async move { me.cmt_ensure(lpn, flow, true).await });
        }
    }

    /// Makes sure `lpn`'s mapping entry is in the CMT (no-op for the full map), loading it into
    /// `flow`'s partition on a miss (making room there); `lookup`: count the hit or miss.
    async fn cmt_ensure(&self, lpn: Lpn, flow: FlowTag, lookup: bool) {
        let Some(dftl) = &self.map.dftl else { return };
        let seg = dftl.borrow().segment_of(lpn.0);
        loop {
            let (cached, loading) = {
                let d = dftl.borrow();
                (d.cmt.is_cached(seg), d.cmt.is_loading(seg))
            };
            if cached {
                let mut d = dftl.borrow_mut();
                d.cmt.touch(seg);
                if lookup {
                    d.cmt.count(flow, true);
                }
                return;
            }
            if loading {
                self.waits.wait(WaitKey::Segment(seg)).await;
                continue;
            }
            break;
        }
        let part = {
            let mut d = dftl.borrow_mut();
            if lookup {
                d.cmt.count(flow, false);
            }
            let part = d.cmt.part_of(flow);
            d.cmt.start_loading(seg, part);
            part
        };
        self.cx.compute(self.cfg.costs.cmt_miss).await;
        self.cmt_make_room(part).await;
        let t = dftl.borrow().tpage_of_segment(seg);
        self.tpage_read(t, flow).await;
        let mut d = dftl.borrow_mut();
        d.cmt.finish_loading(seg);
        if d.is_pending(t) {
            // GC changed entries of this page since it was written: the cached copy merges
            // them and is newer than flash.
            d.cmt.mark_dirty(seg);
        }
        drop(d);
        self.waits.notify(WaitKey::Segment(seg));
    }

    /// Evicts partition `part`'s least recently used segments until it is within its capacity
    /// (the whole CMT when shared), writing dirty ones back with the rest of their translation
    /// page.
    async fn cmt_make_room(&self, part: usize) {
        let dftl = self.map.dftl.as_ref().expect("DFTL");
        loop {
            let victim = {
                let d = dftl.borrow();
                if !d.cmt.over_capacity(part) {
                    return;
                }
                d.cmt.lru(part)
            };
            let Some(seg) = victim else { return }; // everything is loading; capacity frees as loads finish
            let (dirty, t) = {
                let d = dftl.borrow();
                (d.cmt.is_dirty(seg), d.tpage_of_segment(seg))
            };
            if dirty {
                // Boxed: the rewrite's future is large (a program with its retries), and every
                // miss's task (a mapping prefetch, spawned per unit at full size) would
                // otherwise carry, and copy, room for it.
                Box::pin(self.tpage_write(t, None)).await;
            } else {
                dftl.borrow_mut().cmt.evict(seg);
            }
        }
    }

    /// Reads translation page `t` from flash (if it was ever written), for `flow` (the flow whose
    /// lookup missed; `FlowTag::NONE` for a write-back's read-modify-write).
    async fn tpage_read(&self, t: u32, flow: FlowTag) {
        let dftl = self.map.dftl.as_ref().expect("DFTL");
        let Some(unit) = dftl.borrow().location(t) else { return };
        dftl.borrow_mut().tpage_reads += 1;
        let (page, _) = self.geo.unit_page(unit);
        // Checked by the ECC (time and counts). The entries are in DRAM all the same: an
        // uncorrectable translation page is counted, not acted on (a real FTL would rebuild it
        // from the data pages' OOB).
        self.pin(page);
        let (_, checked, _) = self
            .read_checked(FlashRequest::read(TxnSource::Mapping, page).for_flow(flow), self.whole_page())
            .await;
        if checked.is_err() {
            self.stats.borrow_mut().media.unreadable_tpages += 1;
        }
    }

    /// Writes translation page `t` with the current entries of its LPNs (all dirty segments of
    /// the page are written together), and moves the directory to the new copy. Into the
    /// mapping stream, or with `gc_plane` into that plane's GC frontier (queued with GC's
    /// pages; counted as a translation page all the same).
    pub async fn tpage_write(&self, t: u32, gc_plane: Option<u32>) {
        let dftl = self.map.dftl.as_ref().expect("DFTL");
        while dftl.borrow().writing[t as usize] {
            self.waits.wait(WaitKey::Tpage(t)).await;
        }
        dftl.borrow_mut().writing[t as usize] = true;
        let partial = {
            let mut d = dftl.borrow_mut();
            let segs = d.segments_of(t);
            !d.cmt.mark_clean_all(segs)
        };
        if partial {
            self.tpage_read(t, FlowTag::NONE).await; // read-modify-write of the entries not in DRAM
        }
        let (stream, plane) = match gc_plane {
            Some(p) => (Stream::Gc, Some(p)),
            None => (Stream::Mapping, None),
        };
        let page = self.alloc_page(stream, plane).await;
        let per = dftl.borrow().entries_per_tpage as usize;
        let data = {
            let l2p = self.map.l2p.borrow();
            let raw = l2p.raw(t as usize * per..(t as usize + 1) * per);
            let mut d = dftl.borrow_mut();
            d.clear_pending(t);
            if let Some(on_flash) = d.on_flash.as_mut() {
                on_flash[t as usize * per..t as usize * per + raw.len()].copy_from_slice(raw);
            }
            drop(d);
            self.payload.then(|| self.tpage_bytes(raw))
        };
        let mut oob = Oob::empty(self.geo.units_per_page());
        oob.set(0, OobSlot { lpn: Some(Lpn(TRANSLATION_LPN_BASE + t)), tag: DataTag(t as u16) });
        let write = PageWrite { oob, data };
        // Into the GC queue (and the GC stream's frontier) with GC's pages, else the mapping
        // stream's; counted as a translation page either way.
        let (page, _) = self
            .program_retrying((crate::ftl::alloc::Lane::of(stream), Stream::Mapping), plane, page, write, 1)
            .await;
        let new = self.geo.unit_addr(page, 0);
        let old = dftl.borrow_mut().relocate(t, new);
        if let Some(old) = old {
            self.invalidate(old);
        }
        {
            let mut d = dftl.borrow_mut();
            d.tpage_writes += 1;
            d.writing[t as usize] = false;
        }
        self.waits.notify(WaitKey::Tpage(t));
    }

    /// A translation page's bytes in a payload store: its raw entries, little-endian, then
    /// zeroes to the end of the page.
    pub(crate) fn tpage_bytes(&self, raw: &[u32]) -> Box<[u8]> {
        let mut bytes = vec![0u8; self.geo.page_bytes() as usize];
        for (i, e) in raw.iter().enumerate() {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&e.to_le_bytes());
        }
        bytes.into_boxed_slice()
    }
}
