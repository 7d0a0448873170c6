//! The zoned FTL's operations: zone writes into page buffers, the writer task that programs
//! them in order, reads that find units still buffered, flush, reset, finish and recovery.

use std::rc::Rc;

use nand::{Lpn, PageIdx};

use crate::fil::{FlashStatus, TxnResult, TxnSource};
use crate::ftl::blocks::Stream;
use crate::ftl::data::UnitData;
use crate::ftl::io::{UnitResults, UnitWrite};
use crate::ftl::state::{Ftl, FtlInner};
use crate::ftl::zoned::{Job, ZoneLayout, ZoneStats, Zoned};
use crate::trace::Phases;

impl Ftl {
    /// The zones of a zoned namespace (`None` for a conventional one).
    pub fn zone_layout(&self) -> Option<&ZoneLayout> {
        self.inner.zoned.as_ref().map(|z| &z.layout)
    }

    /// The zoned namespace's configuration.
    pub fn zone_config(&self) -> Option<&crate::ftl::zoned::ZonedConfig> {
        self.inner.zoned.as_ref().map(|z| &z.cfg)
    }

    /// What the zones cost so far (`None` for a conventional namespace).
    pub fn zone_stats(&self) -> Option<ZoneStats> {
        self.inner.zoned.as_ref().map(|z| z.stats.borrow().clone())
    }

    /// Writes whole units at a zone's write pointer (the HIL checked and moved it): into the
    /// zone's page buffer, a job for the writer task per full page. With `fua`, returns once
    /// they are on flash (the zone's open page padded if it must be).
    ///
    /// The units enter the buffer before the first await: writes to a zone keep the order
    /// in which the HIL moved its write pointer.
    pub async fn zone_write(&self, zone: u32, writes: Vec<UnitWrite>, fua: bool, ph: &mut Phases) {
        let i = &self.inner;
        let t0 = i.cx.now();
        let n = writes.len() as u64;
        i.stats.borrow_mut().host_units_written += n;
        let z = i.zoned();
        {
            let mut pending = z.pending.borrow_mut();
            let mut flash = z.flash.borrow_mut();
            for w in writes {
                pending.insert(w.lpn, w.data.clone());
                flash[zone as usize].partial.push((w.lpn, w.data));
            }
        }
        i.cx.compute(i.cfg.costs.lookup * n).await;
        i.emit_full_pages(zone).await;
        if fua {
            i.sync_zone(zone).await;
        }
        ph.cache += i.cx.now().since(t0);
    }

    /// Reads units of a zoned namespace: those still in a page buffer or programming from
    /// DRAM, the rest from flash (one read per page; the data cache is not used: a zoned
    /// namespace's DRAM buffers writes, and a line filled before a write would go stale).
    pub async fn zone_read(&self, lpns: &[Lpn], ph: &mut Phases) -> UnitResults {
        let i = &self.inner;
        let z = i.zoned();
        i.enter(crate::flow::Point::Translate, lpns.first().copied()).await;
        i.cx.compute(i.cfg.costs.lookup * lpns.len() as u64).await;
        i.stats.borrow_mut().host_units_read += lpns.len() as u64;
        let buffered: Vec<Option<UnitData>> = {
            let pending = z.pending.borrow();
            lpns.iter().map(|l| pending.get(l).cloned()).collect()
        };
        let rest: Vec<Lpn> =
            lpns.iter().zip(&buffered).filter(|(_, b)| b.is_none()).map(|(l, _)| *l).collect();
        let all: Vec<usize> = (0..rest.len()).collect();
        let mut read = if rest.is_empty() {
            UnitResults::new()
        } else {
            i.read_misses(&rest, &all, crate::fil::FlowTag::NONE, ph).await
        };
        read.reverse();
        buffered.into_iter().map(|b| b.map_or_else(|| read.pop().expect("one result per unit"), Ok)).collect()
    }

    /// Makes every zone write so far durable: pads every open page and waits for every job.
    pub async fn zone_flush(&self) {
        let i = &self.inner;
        for zone in 0..i.zoned().layout.zones {
            i.emit_partial(zone).await;
        }
        while i.zoned().inflight.get() > 0 {
            i.zoned().settled.notified().await;
        }
    }

    /// Resets zone `zone`, of which `written` units were written: waits for its jobs, unmaps
    /// its units and erases every block it holds (all its dies' erases at once).
    /// Commands to the zone wait meanwhile (see [`zone_idle`](Self::zone_idle)).
    pub async fn zone_reset(&self, zone: u32, written: u64) {
        let i = &self.inner;
        let z = i.zoned();
        let t0 = i.cx.now();
        z.resetting.borrow_mut()[zone as usize] = true;
        i.cx.compute(i.cfg.costs.trim).await;
        // Units still buffered are dropped; those programming are waited for.
        let dropped: Vec<(Lpn, UnitData)> = std::mem::take(&mut z.flash.borrow_mut()[zone as usize].partial);
        {
            let mut pending = z.pending.borrow_mut();
            for (lpn, _) in &dropped {
                pending.remove(lpn);
            }
        }
        z.stats.borrow_mut().reset_dropped_units += dropped.len() as u64;
        while z.flash.borrow()[zone as usize].inflight > 0 {
            z.settled.notified().await;
        }
        let first = z.first_unit(zone);
        for u in 0..written as u32 {
            i.unmap(Lpn(first + u)).await;
        }
        let blocks = {
            let mut flash = z.flash.borrow_mut();
            let f = &mut flash[zone as usize];
            f.pages = 0;
            f.open.iter_mut().for_each(|o| *o = None);
            std::mem::take(&mut f.held)
        };
        {
            let mut bm = i.blocks.borrow_mut();
            for &b in &blocks {
                if bm.info(b).usage == crate::ftl::BlockUse::Open {
                    bm.close(b);
                }
                bm.set_victim(b);
            }
        }
        let erased = sim::join_all(
            blocks.iter().map(|&b| i.erase_block(b, (TxnSource::User, crate::fil::FlowTag::NONE))),
        )
        .await;
        let mut st = z.stats.borrow_mut();
        st.resets += 1;
        st.reset_erases += erased.iter().filter(|&&e| e).count() as u64;
        st.reset_ns += i.cx.now().since(t0).as_nanos();
        z.resetting.borrow_mut()[zone as usize] = false;
        z.settled.notify_all();
    }

    /// Waits until no reset of `zone` is under way.
    pub async fn zone_idle(&self, zone: u32) {
        let z = self.inner.zoned();
        while z.resetting.borrow()[zone as usize] {
            z.settled.notified().await;
        }
    }

    /// Finishes zone `zone` written to `from` units: pads the rest of its capacity with
    /// zeroes (so that it reads as zeroes and recovers as full) and waits until it is on flash.
    pub async fn zone_finish(&self, zone: u32, from: u64) {
        let i = &self.inner;
        let z = i.zoned();
        let (first, cap) = (z.first_unit(zone), z.layout.capacity_units);
        let zero = UnitData::zero(i.payload, i.unit_bytes);
        let pad = cap.saturating_sub(from);
        for u in from..cap {
            z.flash.borrow_mut()[zone as usize].partial.push((Lpn(first + u as u32), zero.clone()));
            // A page at a time, so that the buffer holds no more than a page of padding.
            if (u + 1 - from).is_multiple_of(i.geo.units_per_page() as u64) {
                i.emit_full_pages(zone).await;
            }
        }
        i.sync_zone(zone).await;
        let mut st = z.stats.borrow_mut();
        st.finishes += (pad > 0) as u64;
        st.finish_pad_units += pad;
    }

    /// After a mount: each zone's written units (the longest prefix of its units that is
    /// mapped; units mapped beyond it are dropped), the blocks holding them taken as the
    /// zone's. The zone's next pages go to fresh blocks.
    pub fn recover_zones(&self) -> Vec<u64> {
        let i = &self.inner;
        let z = i.zoned();
        let mut written = Vec::with_capacity(z.layout.zones as usize);
        for zone in 0..z.layout.zones {
            let first = z.first_unit(zone);
            let cap = z.layout.capacity_units as u32;
            let mut n = 0;
            let mut held = Vec::new();
            while n < cap {
                let Some(addr) = i.map.get(Lpn(first + n)) else { break };
                let block = i.geo.block_of(i.geo.unit_page(addr).0);
                if !held.contains(&block) {
                    held.push(block);
                }
                n += 1;
            }
            let mut dropped = 0;
            for u in n..cap {
                if let Some(addr) = i.map.get(Lpn(first + u)) {
                    let block = i.geo.block_of(i.geo.unit_page(addr).0);
                    if !held.contains(&block) {
                        held.push(block);
                    }
                    i.unmap_now(Lpn(first + u));
                    dropped += 1;
                }
            }
            z.stats.borrow_mut().recovered_dropped_units += dropped;
            z.flash.borrow_mut()[zone as usize].held = held;
            written.push(n as u64);
        }
        written
    }
}

impl FtlInner {
    /// The zoned part (the caller knows the namespace is zoned).
    pub(crate) fn zoned(&self) -> &Zoned {
        self.zoned.as_ref().expect("a zoned namespace")
    }

    /// Points `lpn` nowhere and marks its copy stale (a zone reset), dropping any cached line.
    async fn unmap(&self, lpn: Lpn) {
        self.drop_line(lpn);
        if let Some(old) = self.map_update(lpn, None, crate::fil::FlowTag::NONE, false).await {
            self.fil.array().borrow_mut().invalidate(old);
        }
    }

    /// [`unmap`](Self::unmap) at mount, before any request runs (the full map, no locks).
    fn unmap_now(&self, lpn: Lpn) {
        self.drop_line(lpn);
        self.map.mark_dirty(lpn);
        let old = self.map.l2p.borrow_mut().set(lpn, None);
        if let Some(old) = old {
            self.fil.array().borrow_mut().invalidate(old);
        }
    }

    fn drop_line(&self, lpn: Lpn) {
        let mut cache = self.cache.borrow_mut();
        if let Some(line) = cache.lookup(lpn) {
            cache.remove(line);
        }
    }

    /// Queues a job for every full page in `zone`'s buffer.
    async fn emit_full_pages(&self, zone: u32) {
        let upp = self.geo.units_per_page() as usize;
        while self.zoned().flash.borrow()[zone as usize].partial.len() >= upp {
            self.emit(zone, upp).await;
        }
    }

    /// Queues `zone`'s buffered units a page at a time, the last one padded if it is short
    /// (a full page may still be waiting here for room in the write buffer).
    async fn emit_partial(&self, zone: u32) {
        let upp = self.geo.units_per_page() as usize;
        loop {
            let n = self.zoned().flash.borrow()[zone as usize].partial.len();
            if n == 0 {
                return;
            }
            if n < upp {
                self.zoned().stats.borrow_mut().flush_pad_pages += 1;
            }
            self.emit(zone, upp).await;
        }
    }

    /// Pads `zone`'s open page and waits for all its jobs.
    async fn sync_zone(&self, zone: u32) {
        self.emit_full_pages(zone).await;
        self.emit_partial(zone).await;
        let z = self.zoned();
        while z.flash.borrow()[zone as usize].inflight > 0 {
            z.settled.notified().await;
        }
    }

    /// Queues a job of up to `upp` of `zone`'s buffered units, once the write buffer has room
    /// (the units are taken when there is: jobs keep the order units were written in).
    async fn emit(&self, zone: u32, upp: usize) {
        let z = self.zoned();
        while z.inflight.get() >= z.layout.buffer_pages {
            z.settled.notified().await;
        }
        let units: Vec<(Lpn, UnitData)> = {
            let mut flash = z.flash.borrow_mut();
            let partial = &mut flash[zone as usize].partial;
            let n = partial.len().min(upp);
            if n == 0 {
                return; // another writer took them while this one waited
            }
            flash[zone as usize].inflight += 1;
            flash[zone as usize].partial.drain(..n).collect()
        };
        z.inflight.set(z.inflight.get() + 1);
        if z.queue.try_push(Job { zone, units }).is_err() {
            unreachable!("the zone queue holds the whole write buffer");
        }
    }

    /// The writer task: takes jobs in order, gives each the zone's next page and queues its
    /// program; a task per program maps the units once it is on flash.
    pub(crate) async fn zone_writer(self: Rc<Self>) {
        while let Some(job) = self.zoned().queue.pop().await {
            self.cx.compute(self.cfg.costs.write_back).await;
            let page = match self.zone_page(job.zone) {
                Some(p) => p,
                None => {
                    // No free block in a plane of the zone (more grew bad than the spare
                    // allows): the data stays buffered (readable, never durable). Counted.
                    self.zoned().stats.borrow_mut().stuck_pages += 1;
                    self.settle_job(&job);
                    continue;
                }
            };
            let rx = self
                .start_program((Stream::User, crate::fil::FlowTag::NONE), page, self.page_write(&job.units))
                .await;
            let me = self.clone();
            self.cx.spawn(self.core, "zone program", async move {
                let r = rx.await;
                me.zone_programmed(job, page, r).await;
            });
        }
    }

    /// The next page of `zone`: in its next plane in turn, in that plane's open block (a
    /// free block taken when there is none).
    fn zone_page(&self, zone: u32) -> Option<PageIdx> {
        let z = self.zoned();
        let mut flash = z.flash.borrow_mut();
        let f = &mut flash[zone as usize];
        let planes = &z.planes[(zone % z.layout.sets) as usize];
        let slot = (f.pages % planes.len() as u64) as usize;
        let mut blocks = self.blocks.borrow_mut();
        let (block, next) = match f.open[slot] {
            Some(open) => open,
            None => {
                let b = blocks.take(planes[slot], Stream::User, 0)?;
                f.held.push(b);
                (b, 0)
            }
        };
        let page = self.geo.page_of(block, next);
        blocks.add_pending(block, 1);
        if next + 1 == self.geo.pages {
            blocks.close(block);
            f.open[slot] = None;
        } else {
            f.open[slot] = Some((block, next + 1));
        }
        f.pages += 1;
        Some(page)
    }

    /// A job's program finished: its units are mapped to the page (a failed program queues
    /// them again, for another page).
    async fn zone_programmed(&self, job: Job, page: PageIdx, mut r: TxnResult) {
        self.settle_program(Stream::User, page, job.units.len() as u32, &mut r);
        if r.status != FlashStatus::Ok {
            let z = self.zoned();
            z.flash.borrow_mut()[job.zone as usize].inflight += 1;
            z.inflight.set(z.inflight.get() + 1);
            self.settle_job(&job);
            if z.queue.try_push(job).is_err() {
                unreachable!("a settled job leaves room in the zone queue");
            }
            return;
        }
        for (slot, (lpn, _)) in job.units.iter().enumerate() {
            let new = self.geo.unit_addr(page, slot as u32);
            if let Some(old) = self.map_update(*lpn, Some(new), crate::fil::FlowTag::NONE, false).await {
                self.fil.array().borrow_mut().invalidate(old);
            }
        }
        {
            let mut pending = self.zoned().pending.borrow_mut();
            for (lpn, _) in &job.units {
                pending.remove(lpn);
            }
        }
        self.settle_job(&job);
    }

    /// A job left the write buffer.
    fn settle_job(&self, job: &Job) {
        let z = self.zoned();
        z.flash.borrow_mut()[job.zone as usize].inflight -= 1;
        z.inflight.set(z.inflight.get() - 1);
        z.settled.notify_all();
    }
}
