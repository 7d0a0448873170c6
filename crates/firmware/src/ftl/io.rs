//! The host-facing unit operations, in coroutine style: each is one straight-line async
//! function that awaits the cache, the mapping table and the flash.

use nand::Lpn;

use crate::fil::{FlashRequest, TxnSource};
use crate::ftl::cache::LineState;
use crate::ftl::data::UnitData;
use crate::ftl::flash::MediaError;
use crate::ftl::state::{Ftl, FtlInner};
use crate::ftl::waits::WaitKey;
use crate::trace::Phases;

/// Part of a mapping unit to write.
#[derive(Clone, Debug)]
pub struct UnitWrite {
    /// The unit.
    pub lpn: Lpn,
    /// First sector within the unit.
    pub first_sector: u32,
    /// Sectors written.
    pub sectors: u32,
    /// The data: bytes of those sectors, or the unit's new tag.
    pub data: UnitData,
}

impl Ftl {
    /// Reads one mapping unit: from the cache, else from flash (unwritten units read as
    /// zeroes). Adds the time spent to `ph`.
    pub async fn read(&self, lpn: Lpn, ph: &mut Phases) -> Result<UnitData, MediaError> {
        self.inner.read(lpn, ph).await
    }

    /// Writes part or all of one mapping unit into the cache; with `fua`, returns only once the
    /// unit is on flash. A partial write of a unit not in the cache reads it first. Adds the
    /// time spent to `ph`.
    pub async fn write(
        &self,
        w: UnitWrite,
        sectors_per_unit: u32,
        sector_bytes: u32,
        fua: bool,
        ph: &mut Phases,
    ) -> Result<(), MediaError> {
        self.inner.write(w, sectors_per_unit, sector_bytes, fua, ph).await
    }

    /// Deallocates one mapping unit: it reads as zeroes afterwards.
    pub async fn trim(&self, lpn: Lpn) {
        self.inner.trim(lpn).await
    }

    /// Writes every dirty cached unit to flash and waits until all are there.
    pub async fn flush(&self) {
        self.inner.flush().await
    }
}

impl FtlInner {
    async fn read(&self, lpn: Lpn, ph: &mut Phases) -> Result<UnitData, MediaError> {
        let t0 = self.cx.now();
        self.cx.compute(self.cfg.costs.lookup).await;
        self.stats.borrow_mut().host_units_read += 1;
        /// What the cache says about a read.
        enum Next {
            Hit(UnitData),
            Bypass,
            Fill,
            WaitFill,
            MakeRoom,
        }
        loop {
            let next = {
                let mut cache = self.cache.borrow_mut();
                match cache.lookup(lpn) {
                    Some(i) if cache.line(i).state == LineState::Filling => Next::WaitFill,
                    Some(i) => {
                        cache.touch(i);
                        cache.hits += 1;
                        Next::Hit(cache.line(i).data.clone())
                    }
                    None if !self.cfg.cache.read_allocate => {
                        cache.misses += 1;
                        Next::Bypass
                    }
                    None if cache.has_free() => {
                        cache.misses += 1;
                        cache.insert(lpn, LineState::Filling, UnitData::zero(false, 0));
                        Next::Fill
                    }
                    None => Next::MakeRoom,
                }
            };
            match next {
                Next::Hit(data) => {
                    ph.cache += self.cx.now().since(t0);
                    return Ok(data);
                }
                Next::Bypass => {
                    ph.cache += self.cx.now().since(t0);
                    return self.read_flash(lpn, ph).await;
                }
                Next::Fill => break,
                Next::WaitFill => self.waits.wait(WaitKey::Line(lpn)).await, // filled by another request
                Next::MakeRoom => self.make_free_line().await,
            }
        }
        ph.cache += self.cx.now().since(t0);
        let res = self.read_flash(lpn, ph).await;
        self.fill_done(lpn, res.clone().ok());
        res
    }

    /// Ends a `Filling` line: with its data, or (on a failed read) by dropping it.
    fn fill_done(&self, lpn: Lpn, data: Option<UnitData>) {
        let mut cache = self.cache.borrow_mut();
        let i = cache.lookup(lpn).expect("a filling line stays until filled");
        match data {
            Some(d) => {
                *cache.data_mut(i) = d;
                cache.set_state(i, LineState::Clean);
            }
            None => cache.remove(i),
        }
        drop(cache);
        self.waits.notify(WaitKey::Line(lpn));
        self.waits.notify(WaitKey::FreeLine);
    }

    /// Reads a unit's current copy from flash.
    pub(crate) async fn read_flash(&self, lpn: Lpn, ph: &mut Phases) -> Result<UnitData, MediaError> {
        let t0 = self.cx.now();
        let unit = self.map_get(lpn).await;
        ph.mapping += self.cx.now().since(t0);
        let Some(unit) = unit else {
            return Ok(UnitData::zero(self.payload, self.unit_bytes));
        };
        let (page, slot) = self.geo.unit_page(unit);
        let upp = self.geo.units_per_page();
        let mut req = FlashRequest::read(TxnSource::User, page);
        req.xfer_bytes = self.fil.timing().partial_xfer_bytes(1, upp, self.geo.unit_bytes());
        req.want_data = self.payload;
        let r = self.read_pinned(req).await;
        ph.add_flash(&r.timing);
        let t1 = self.cx.now();
        let checked = self.check_read(page, &r).await;
        ph.ecc += self.cx.now().since(t1);
        checked?;
        Ok(self.unit_of(&r, slot))
    }

    /// Unit `slot` of a page read.
    pub(crate) fn unit_of(&self, r: &crate::fil::TxnResult, slot: u32) -> UnitData {
        match &r.data {
            Some(page) => {
                let at = slot as usize * self.unit_bytes;
                UnitData::Bytes(page[at..at + self.unit_bytes].into())
            }
            None => UnitData::Tag(r.oob.as_ref().expect("a read returns its OOB").tag(slot as usize)),
        }
    }

    async fn write(
        &self,
        w: UnitWrite,
        spu: u32,
        sector: u32,
        fua: bool,
        ph: &mut Phases,
    ) -> Result<(), MediaError> {
        let (t0, before) = (self.cx.now(), ph.total());
        self.cx.compute(self.cfg.costs.lookup).await;
        self.stats.borrow_mut().host_units_written += 1;
        let full = w.first_sector == 0 && w.sectors == spu;
        let lpn = w.lpn;
        /// What the cache says about a write.
        enum Next {
            Done,
            WaitFill,
            MakeRoom,
            ReadModifyWrite,
        }
        let mut data = Some(w.data);
        loop {
            let next = {
                let mut cache = self.cache.borrow_mut();
                match cache.lookup(lpn) {
                    Some(i) if cache.line(i).state == LineState::Filling => Next::WaitFill,
                    Some(i) => {
                        let d = data.as_ref().expect("written once");
                        cache.data_mut(i).merge(w.first_sector as usize, sector as usize, d);
                        let st = match cache.line(i).state {
                            LineState::Writing | LineState::WritingDirty => LineState::WritingDirty,
                            _ => LineState::Dirty,
                        };
                        cache.set_state(i, st);
                        cache.touch(i);
                        Next::Done
                    }
                    None if !cache.has_free() => Next::MakeRoom,
                    None if full => {
                        let d = self.full_unit(data.take().expect("written once"));
                        cache.insert(lpn, LineState::Dirty, d);
                        Next::Done
                    }
                    None => {
                        cache.insert(lpn, LineState::Filling, UnitData::zero(false, 0));
                        Next::ReadModifyWrite
                    }
                }
            };
            match next {
                Next::Done => break,
                Next::WaitFill => self.waits.wait(WaitKey::Line(lpn)).await,
                Next::MakeRoom => self.make_free_line().await,
                Next::ReadModifyWrite => {
                    self.stats.borrow_mut().rmw_reads += 1;
                    let old = self.read_flash(lpn, ph).await;
                    let Ok(mut unit) = old else {
                        self.fill_done(lpn, None);
                        return old.map(|_| ());
                    };
                    unit.merge(
                        w.first_sector as usize,
                        sector as usize,
                        data.as_ref().expect("written once"),
                    );
                    self.fill_done(lpn, Some(unit));
                    let mut cache = self.cache.borrow_mut();
                    let i = cache.lookup(lpn).expect("just filled");
                    cache.set_state(i, LineState::Dirty);
                    break;
                }
            }
        }
        if fua {
            self.make_durable(lpn).await;
        }
        // Everything not spent in the read of a read-modify-write is cache time (lookups,
        // waiting for a line, write-backs forced by a full cache or FUA).
        ph.cache += self.cx.now().since(t0) - (ph.total() - before);
        Ok(())
    }

    /// A whole unit's data from a full-unit write (payload writes carry exactly one unit).
    fn full_unit(&self, data: UnitData) -> UnitData {
        match data {
            UnitData::Bytes(b) if b.len() == self.unit_bytes => UnitData::Bytes(b),
            UnitData::Bytes(b) => {
                let mut u = vec![0u8; self.unit_bytes];
                u[..b.len()].copy_from_slice(&b);
                UnitData::Bytes(u.into_boxed_slice())
            }
            tag => tag,
        }
    }

    /// Waits until `lpn`'s cached data is on flash (FUA).
    async fn make_durable(&self, lpn: Lpn) {
        loop {
            let state = {
                let cache = self.cache.borrow();
                cache.lookup(lpn).map(|i| (i, cache.line(i).state))
            };
            match state {
                None | Some((_, LineState::Clean)) => return,
                Some((i, LineState::Dirty)) => {
                    let upp = self.geo.units_per_page() as usize;
                    let mut batch = vec![i];
                    batch.extend(
                        self.cache
                            .borrow()
                            .dirty_near_tail(upp, 256)
                            .into_iter()
                            .filter(|&j| j != i)
                            .take(upp - 1),
                    );
                    self.write_back(batch).await;
                }
                Some(_) => self.waits.wait(WaitKey::Line(lpn)).await,
            }
        }
    }

    async fn trim(&self, lpn: Lpn) {
        self.cx.compute(self.cfg.costs.trim).await;
        loop {
            let state = {
                let cache = self.cache.borrow();
                cache.lookup(lpn).map(|i| (i, cache.line(i).state))
            };
            match state {
                None => break,
                Some((i, LineState::Clean | LineState::Dirty)) => {
                    self.cache.borrow_mut().remove(i);
                    self.waits.notify(WaitKey::FreeLine);
                    break;
                }
                Some(_) => self.waits.wait(WaitKey::Line(lpn)).await,
            }
        }
        if let Some(old) = self.map_set(lpn, None).await {
            self.invalidate(old);
        }
        self.stats.borrow_mut().host_units_trimmed += 1;
    }

    async fn flush(&self) {
        loop {
            let (dirty, writing) = {
                let c = self.cache.borrow();
                (c.all_dirty(), c.writing_count())
            };
            if !dirty.is_empty() {
                let upp = self.geo.units_per_page() as usize;
                let batches: Vec<Vec<u32>> = dirty.chunks(upp).map(|c| c.to_vec()).collect();
                sim::join_all(batches.into_iter().map(|b| self.write_back(b))).await;
            } else if writing > 0 {
                self.waits.wait(WaitKey::FreeLine).await;
            } else {
                return;
            }
        }
    }

    /// Frees one cache line: evicts a clean line near the LRU end, else writes back the dirty
    /// lines there, else waits for a write-back in progress.
    async fn make_free_line(&self) {
        loop {
            let batch = {
                let mut cache = self.cache.borrow_mut();
                if cache.has_free() {
                    return;
                }
                if let Some(v) = cache.clean_victim(64) {
                    cache.remove(v);
                    return;
                }
                cache.dirty_near_tail(self.geo.units_per_page() as usize, 256)
            };
            if batch.is_empty() {
                self.stats.borrow_mut().cache_full_waits += 1;
                self.waits.wait(WaitKey::FreeLine).await;
            } else {
                self.write_back(batch).await;
            }
        }
    }
}
