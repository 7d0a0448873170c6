//! The host-facing unit operations, in coroutine style: each is one straight-line async
//! function that awaits the cache, the mapping table and the flash.

use nand::{Lpn, PageIdx};
use sim::SimDuration;
use smallvec::SmallVec;

use crate::fil::{FlashRequest, FlowTag, TxnSource};
use crate::flow::{Occupied, Point, Table};
use crate::ftl::cache::LineState;
use crate::ftl::data::UnitData;
use crate::ftl::flash::MediaError;
use crate::ftl::state::{Ftl, FtlInner};
use crate::ftl::waits::WaitKey;
use crate::trace::Phases;

/// The answers to a multi-unit read, in the order asked (no allocation for a few units).
pub type UnitResults = SmallVec<[Result<UnitData, MediaError>; 4]>;

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
    /// The FDP placement identifier of the write (the Data Placement directive's DSPEC), if it
    /// had one; the FTL ignores it without FDP.
    pub pid: Option<u16>,
    /// The NVM set of the queue the write came through (0: the whole array): its data goes
    /// only to the set's planes.
    pub set: u8,
    /// The submission queue the write came through: its flow's cache partition takes the
    /// line (see [`Ftl::bind_flows`]; 0 and unbound queues: the first partition).
    pub sq: u16,
}

impl Ftl {
    /// Reads one mapping unit: from the cache, else from flash (unwritten units read as
    /// zeroes). Adds the time spent to `ph`.
    pub async fn read(&self, lpn: Lpn, ph: &mut Phases) -> Result<UnitData, MediaError> {
        self.inner.read(lpn, 0, ph).await
    }

    /// Reads several mapping units (one host command's): cache hits are served from DRAM, the
    /// rest are looked up and read with one flash read per physical page they share. Adds the
    /// time of the slowest unit's path to `ph`. `sq` is the submission queue the command came
    /// through: a line it fills goes to that queue's flow's cache partition.
    pub async fn read_many(&self, lpns: &[Lpn], sq: u16, ph: &mut Phases) -> UnitResults {
        self.inner.read_many(lpns, sq, ph).await
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

    /// Deallocates one mapping unit: it reads as zeroes afterwards. `sq` is the submission
    /// queue the command came through (its flow's CMT partition looks the entry up).
    pub async fn trim(&self, lpn: Lpn, sq: u16) {
        self.inner.trim(lpn, sq).await
    }

    /// Writes every dirty cached unit to flash and waits until all are there.
    pub async fn flush(&self) {
        self.inner.flush().await
    }
}

/// The cache's answer to a host read.
enum CacheRead {
    Hit(UnitData),
    /// A line was reserved (`Filling`): read flash and fill it.
    Fill,
    /// Read flash without caching.
    Bypass,
    /// Another request is filling the line.
    WaitFill,
}

impl FtlInner {
    async fn read(&self, lpn: Lpn, sq: u16, ph: &mut Phases) -> Result<UnitData, MediaError> {
        self.read_many(&[lpn], sq, ph).await.pop().expect("one result per unit")
    }

    async fn read_many(&self, lpns: &[Lpn], sq: u16, ph: &mut Phases) -> UnitResults {
        let part = self.cache_part(sq);
        self.enter(Point::Translate, lpns.first().copied()).await;
        let t0 = self.cx.now();
        self.cx.compute(self.cfg.costs.lookup * lpns.len() as u64).await;
        self.stats.borrow_mut().host_units_read += lpns.len() as u64;
        let mut out: SmallVec<[Option<Result<UnitData, MediaError>>; 4]> =
            smallvec::smallvec![None; lpns.len()];
        let mut filling: SmallVec<[bool; 4]> = smallvec::smallvec![false; lpns.len()];
        let mut misses: SmallVec<[usize; 4]> = SmallVec::new();
        let mut locked = SimDuration::ZERO;
        for (i, &lpn) in lpns.iter().enumerate() {
            loop {
                locked += self.lock(Table::Index, Point::Translate).await;
                let answer = self.cache_read(lpn, part);
                self.unlock(Table::Index);
                match answer {
                    CacheRead::Hit(d) => out[i] = Some(Ok(d)),
                    CacheRead::Fill => {
                        // A miss holds its line's lock until the line holds the data.
                        locked += self.lock_line(lpn, Point::Translate).await;
                        filling[i] = true;
                        misses.push(i);
                    }
                    CacheRead::Bypass => misses.push(i),
                    CacheRead::WaitFill if self.line_locks() => {
                        // Filled by another request, which holds the line's lock meanwhile.
                        locked += self.lock_line(lpn, Point::Translate).await;
                        self.unlock_line(lpn);
                        continue;
                    }
                    CacheRead::WaitFill if self.occupied() == Occupied::Bypass => {
                        self.cache.borrow_mut().count_read(part, false); // read around the occupied line
                        misses.push(i);
                    }
                    CacheRead::WaitFill => {
                        let t = self.cx.now();
                        self.waits.wait(WaitKey::Line(lpn)).await; // filled by another request
                        self.waited_for_line(self.cx.now().since(t));
                        continue;
                    }
                }
                break;
            }
        }
        ph.lock += locked;
        ph.cache += self.cx.now().since(t0) - locked;
        if !misses.is_empty() {
            let flash = self.read_misses(lpns, &misses, self.queue_flow(sq), ph).await;
            self.enter(Point::Cache, None).await;
            for (i, r) in misses.iter().zip(flash) {
                if filling[*i] {
                    self.fill_done(lpns[*i], r.clone().ok());
                }
                out[*i] = Some(r);
            }
        }
        out.into_iter().map(|r| r.expect("every unit answered")).collect()
    }

    /// The cache's answer for a host read of `lpn` by a flow of partition `part` (decided
    /// without awaiting). A hit on another flow's line is a hit (the line stays where it is).
    fn cache_read(&self, lpn: Lpn, part: usize) -> CacheRead {
        let mut cache = self.cache.borrow_mut();
        match cache.lookup(lpn) {
            Some(i) if cache.line(i).state == LineState::Filling => CacheRead::WaitFill,
            Some(i) => {
                cache.touch(i);
                cache.count_read(part, true);
                CacheRead::Hit(cache.line(i).data.clone())
            }
            None => {
                cache.count_read(part, false);
                if !self.cfg.cache.read_allocate {
                    return CacheRead::Bypass;
                }
                if !cache.has_free(part)
                    && let Some(v) = cache.clean_victim(part)
                {
                    cache.remove(v);
                }
                if cache.has_free(part) {
                    cache.insert(part, lpn, LineState::Filling, UnitData::zero(false, 0));
                    CacheRead::Fill
                } else {
                    CacheRead::Bypass // no room without a write-back: read around the cache
                }
            }
        }
    }

    /// Reads the units `misses` (indices into `lpns`) from flash for `flow`: each block pinned
    /// as soon as its address is known, one read per distinct page.
    pub(crate) async fn read_misses(
        &self,
        lpns: &[Lpn],
        misses: &[usize],
        flow: FlowTag,
        ph: &mut Phases,
    ) -> UnitResults {
        let t0 = self.cx.now();
        let mut units: SmallVec<[Option<nand::UnitAddr>; 4]> = SmallVec::with_capacity(misses.len());
        let mut locked = SimDuration::ZERO;
        for &i in misses {
            let (u, waited) = self.map_lookup(lpns[i], flow).await;
            locked += waited;
            if let Some(u) = u {
                self.pin(self.geo.unit_page(u).0);
            }
            units.push(u);
        }
        ph.lock += locked;
        ph.mapping += self.cx.now().since(t0) - locked;
        self.enter(Point::Flash, None).await;
        // Each distinct page once, with the units asked for (bit i: unit i of the page).
        let mut pages: SmallVec<[(PageIdx, u32); 4]> = SmallVec::new();
        for u in units.iter().flatten() {
            let (page, slot) = self.geo.unit_page(*u);
            match pages.iter_mut().find(|(p, _)| *p == page) {
                Some((_, mask)) => {
                    *mask |= 1 << slot;
                    self.blocks.borrow_mut().unpin(self.geo.block_of(page)); // one pin per page read
                }
                None => pages.push((page, 1 << slot)),
            }
        }
        let upp = self.geo.units_per_page();
        let read_page = |page: PageIdx, mask: u32| async move {
            let mut req = FlashRequest::read(TxnSource::User, page).for_flow(flow);
            req.xfer_bytes =
                self.fil.timing().partial_xfer_bytes(mask.count_ones(), upp, self.geo.unit_bytes());
            req.want_data = self.payload;
            req.want_oob = !self.payload; // bytes alone; metadata-only reads need the tags
            req.want_parity = self.payload && self.ecc.is_some(); // the ECC decodes the bytes
            self.read_checked(req, mask).await
        };
        let reads: SmallVec<[_; 1]> = match pages.as_slice() {
            [] => SmallVec::new(),
            [(page, n)] => smallvec::smallvec![read_page(*page, *n).await], // the common case: no join
            _ => sim::join_all(pages.iter().map(|&(page, n)| read_page(page, n))).await.into(),
        };
        if let Some((r, _, ecc)) = reads.iter().max_by_key(|(r, _, ecc)| r.timing.completed + *ecc) {
            ph.add_flash(&r.timing);
            ph.ecc += *ecc;
        }
        units
            .iter()
            .map(|u| match u {
                None => Ok(UnitData::zero(self.payload, self.unit_bytes)),
                Some(u) => {
                    let (page, slot) = self.geo.unit_page(*u);
                    let k = pages.iter().position(|(p, _)| *p == page).expect("grouped");
                    let (r, checked, _) = &reads[k];
                    checked.clone().map(|()| self.unit_of(r, slot))
                }
            })
            .collect()
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
        self.unlock_line(lpn);
        self.waits.notify(WaitKey::Line(lpn));
        self.wb.free_line.notify_all();
    }

    /// Reads a unit's current copy from flash for `flow` (bypassing the cache).
    pub(crate) async fn read_flash(
        &self,
        lpn: Lpn,
        flow: FlowTag,
        ph: &mut Phases,
    ) -> Result<UnitData, MediaError> {
        self.read_misses(&[lpn], &[0], flow, ph).await.pop().expect("one result")
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
        self.enter(Point::Translate, Some(w.lpn)).await;
        let (t0, before) = (self.cx.now(), ph.total());
        self.cx.compute(self.cfg.costs.lookup).await;
        self.stats.borrow_mut().host_units_written += 1;
        let place = self.host_placed(w.pid).in_set(w.set);
        let part = self.cache_part(w.sq);
        let flow = self.queue_flow(w.sq);
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
            // Lock-based firmware takes the line first (waiting out a miss that is filling it),
            // then the index; a read-modify-write keeps the line until it holds the data.
            ph.lock += self.lock_line(lpn, Point::Translate).await;
            ph.lock += self.lock(Table::Index, Point::Translate).await;
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
                        cache.set_place(i, place);
                        cache.set_flow(i, flow);
                        cache.touch(i);
                        Next::Done
                    }
                    None if !cache.has_free(part) => Next::MakeRoom,
                    None if full => {
                        let d = self.full_unit(data.take().expect("written once"));
                        let i = cache.insert(part, lpn, LineState::Dirty, d);
                        cache.set_place(i, place);
                        cache.set_flow(i, flow);
                        Next::Done
                    }
                    None => {
                        cache.insert(part, lpn, LineState::Filling, UnitData::zero(false, 0));
                        Next::ReadModifyWrite
                    }
                }
            };
            self.unlock(Table::Index);
            if !matches!(next, Next::ReadModifyWrite) {
                self.unlock_line(lpn);
            }
            match next {
                Next::Done => {
                    self.maybe_flush();
                    break;
                }
                Next::WaitFill => {
                    let t = self.cx.now();
                    self.waits.wait(WaitKey::Line(lpn)).await;
                    self.waited_for_line(self.cx.now().since(t));
                }
                Next::MakeRoom => self.make_free_line(part).await,
                Next::ReadModifyWrite => {
                    self.stats.borrow_mut().rmw_reads += 1;
                    let old = self.read_flash(lpn, flow, ph).await;
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
                    {
                        let mut cache = self.cache.borrow_mut();
                        let i = cache.lookup(lpn).expect("just filled");
                        cache.set_state(i, LineState::Dirty);
                        cache.set_place(i, place);
                        cache.set_flow(i, flow);
                    }
                    self.maybe_flush();
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
                UnitData::Bytes(u.into())
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
                    let p = self.cache.borrow().owner(i);
                    batch.extend(
                        self.cache
                            .borrow()
                            .oldest_dirty(p, upp)
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

    async fn trim(&self, lpn: Lpn, sq: u16) {
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
                    self.wb.free_line.notify_all();
                    break;
                }
                Some(_) => self.waits.wait(WaitKey::Line(lpn)).await,
            }
        }
        if let Some(old) = self.map_set(lpn, None, self.queue_flow(sq)).await {
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
                let batches: Vec<Vec<u32>> = dirty.chunks(self.job_units()).map(|c| c.to_vec()).collect();
                sim::join_all(batches.into_iter().map(|b| self.write_back(b))).await;
            } else if writing > 0 {
                self.wb.free_line.notified().await;
            } else {
                return;
            }
        }
    }

    /// Frees one line of cache partition `part`: evicts its least recently used clean line;
    /// else waits for a line the write-backs free. In array mode the background write-backs are running (or started
    /// here); in on-demand mode this request writes back the oldest dirty page itself unless
    /// the lines already being written back to make room will free enough for everyone
    /// waiting. Every write-back or fill that ends wakes all waiters, and a request waits only
    /// while one is in flight, so no wake-up can be lost.
    async fn make_free_line(&self, part: usize) {
        let on_demand = self.wb.policy.on_demand();
        loop {
            let batch = {
                let mut cache = self.cache.borrow_mut();
                if cache.has_free(part) {
                    return;
                }
                if let Some(v) = cache.clean_victim(part) {
                    cache.remove(v);
                    return;
                }
                let own = cache.part_counts(part);
                let in_flight = own.writing + own.filling > 0;
                if !on_demand || (in_flight && self.wb.freeing.get() > self.wb.line_waiters.get()) {
                    Vec::new() // the background write-backs, or enough lines, are on their way
                } else {
                    let batch = cache.oldest_dirty(part, self.geo.units_per_page() as usize);
                    assert!(in_flight || !batch.is_empty(), "a full cache with no clean, dirty or busy line");
                    batch
                }
            };
            if batch.is_empty() {
                if !on_demand {
                    self.maybe_flush();
                    let c = self.cache.borrow();
                    assert!(
                        c.writing_count() + c.filling_count() > 0,
                        "a full cache with no write-back or fill in flight"
                    );
                }
                self.stats.borrow_mut().cache_full_waits += 1;
                self.wb.line_waiters.set(self.wb.line_waiters.get() + 1);
                self.wb.free_line.notified().await;
                self.wb.line_waiters.set(self.wb.line_waiters.get() - 1);
            } else {
                let n = batch.len() as u32;
                self.wb.freeing.set(self.wb.freeing.get() + n);
                self.write_back(batch).await;
                self.wb.freeing.set(self.wb.freeing.get() - n);
            }
        }
    }
}
