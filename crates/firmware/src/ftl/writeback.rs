//! Writing dirty cache lines back to flash: several units packed into one page, programmed on
//! the user stream, then the mapping moved to the new copies and the old ones invalidated.

use nand::{Oob, OobSlot};

use crate::fil::{FlashStatus, PageWrite};
use crate::ftl::blocks::Stream;
use crate::ftl::cache::LineState;
use crate::ftl::data::UnitData;
use crate::ftl::state::FtlInner;
use crate::ftl::waits::WaitKey;

impl FtlInner {
    /// Writes the given dirty lines (at most one page's worth) to one flash page.
    pub(crate) async fn write_back(&self, lines: Vec<u32>) {
        let units = self.claim(lines);
        self.write_units_back(units).await;
    }

    /// Marks the still-dirty lines among `lines` as being written back and takes a copy of
    /// their data.
    fn claim(&self, lines: Vec<u32>) -> Vec<(nand::Lpn, UnitData)> {
        let mut units = Vec::with_capacity(lines.len());
        let mut cache = self.cache.borrow_mut();
        for i in lines {
            if cache.line(i).state == LineState::Dirty {
                cache.set_state(i, LineState::Writing);
                let l = cache.line(i);
                units.push((l.lpn, l.data.clone()));
            }
        }
        units
    }

    /// Background flushing: while too much of the cache is dirty, start write-backs of the
    /// least recently used dirty lines (each spawned on the FTL core), up to the configured
    /// number in flight.
    pub(crate) fn maybe_flush(&self) {
        let Some(threshold) = self.cfg.cache.flush_threshold else { return };
        let limit = (threshold * self.cfg.cache.capacity.bytes() as f64 / self.unit_bytes as f64) as u32;
        while self.flushing.get() < self.cfg.cache.flush_parallel {
            let batch = {
                let cache = self.cache.borrow();
                if cache.dirty_count() <= limit {
                    return;
                }
                cache.oldest_dirty(self.geo.units_per_page() as usize)
            };
            let units = self.claim(batch);
            if units.is_empty() {
                return;
            }
            self.flushing.set(self.flushing.get() + 1);
            let me = self.self_rc();
            self.cx.spawn(self.core, "cache flush", async move {
                me.write_units_back(units).await;
                me.flushing.set(me.flushing.get() - 1);
                me.maybe_flush();
            });
        }
    }

    /// Programs claimed units into one page and moves their mapping there.
    async fn write_units_back(&self, units: Vec<(nand::Lpn, UnitData)>) {
        if units.is_empty() {
            return;
        }
        self.cx.compute(self.cfg.costs.write_back).await;
        let page = self.alloc_page(Stream::User, None).await;
        let write = self.page_write(&units);
        let r = self.program(Stream::User, page, write, units.len() as u32).await;
        let ok = r.status == FlashStatus::Ok;
        if ok {
            for (slot, (lpn, _)) in units.iter().enumerate() {
                let new = self.geo.unit_addr(page, slot as u32);
                if let Some(old) = self.map_set(*lpn, Some(new)).await {
                    self.invalidate(old);
                }
            }
        }
        let mut cache = self.cache.borrow_mut();
        for (lpn, _) in &units {
            let i = cache.lookup(*lpn).expect("lines being written back stay cached");
            match (cache.line(i).state, ok) {
                (LineState::Writing, true) => cache.written_back(i),
                _ => cache.set_state(i, LineState::Dirty), // written again meanwhile, or the program failed
            }
        }
        drop(cache);
        for (lpn, _) in &units {
            self.waits.notify(WaitKey::Line(*lpn));
        }
        self.free_line.notify_all();
    }

    /// The page image of `units` (LPNs and tags in the OOB; bytes for payload stores, padded
    /// with zeroes).
    pub(crate) fn page_write(&self, units: &[(nand::Lpn, UnitData)]) -> PageWrite {
        let mut oob = Oob::empty(self.geo.units_per_page());
        for (slot, (lpn, data)) in units.iter().enumerate() {
            oob.set(slot, OobSlot { lpn: Some(*lpn), tag: data.tag() });
        }
        let data = self.payload.then(|| {
            // Each unit at its slot, zeroes after a short one and after the last (no page-wide
            // zeroing first: this runs for every page programmed).
            let mut page = Vec::with_capacity(self.geo.page_bytes() as usize);
            for (slot, (_, data)) in units.iter().enumerate() {
                if let UnitData::Bytes(b) = data {
                    page.extend_from_slice(b);
                }
                page.resize((slot + 1) * self.unit_bytes, 0);
            }
            page.resize(self.geo.page_bytes() as usize, 0);
            page.into_boxed_slice()
        });
        PageWrite { oob, data }
    }
}
