//! Collecting a victim: move its valid units to the GC stream of the same plane (translation
//! pages are rewritten through DFTL), wait for reads that still use it, erase it, and return it
//! to the free pool. One GC task per plane runs while the plane is short of free blocks.

use std::rc::Rc;

use smallvec::SmallVec;

use nand::{BlockIdx, DataTag, Lpn, Oob, OobSlot, UnitAddr, UnitState};

use crate::fil::{FlashRequest, FlashStatus, FlowTag, PageWrite, TxnSource};
use crate::ftl::alloc::Lane;
use crate::ftl::blocks::{BlockManager, BlockUse, Stream};
use crate::ftl::config::TRANSLATION_LPN_BASE;
use crate::ftl::data::UnitData;
use crate::ftl::gc::victim;
use crate::ftl::state::FtlInner;
use crate::ftl::waits::WaitKey;

/// The valid units of one page: (slot, LPN) pairs in slot order.
pub(crate) type PageUnits = SmallVec<[(u32, Lpn); 4]>;

impl FtlInner {
    /// Starts background GC in `plane` if it is short of free blocks, none is running, and
    /// collecting could free a block.
    ///
    /// Called for every unit that goes stale and, on a write that finds no room, for every
    /// plane; the checks are kept apart from the spawn, whose future would otherwise give
    /// every call a stack frame of kilobytes to set up (9% of a full-size run in GC steady
    /// state).
    #[inline]
    pub(crate) fn maybe_start_gc(&self, plane: u32) {
        let soft = self.cfg.gc.soft(self.geo.blocks);
        if self.zoned.is_none()
            && idle_and_short(plane, soft, &self.blocks.borrow(), &self.gc.active.borrow())
            && !self.waits_for_credit(plane)
            && self.could_free_a_block(plane)
        {
            self.start_gc(plane);
        }
    }

    /// Spawns `plane`'s GC task (the caller checked that it should run).
    #[inline(never)]
    pub(crate) fn start_gc(&self, plane: u32) {
        self.gc.active.borrow_mut()[plane as usize] = true;
        self.gc.stalled.borrow_mut()[plane as usize] = None;
        let me = self.self_rc();
        self.cx.spawn(self.core, format!("gc plane {plane}"), async move { me.gc_plane(plane).await });
    }

    /// Starts GC in every plane that needs it (a write found no room anywhere).
    ///
    /// Each write waiting for room looks again at every wake-up, so the planes that are short
    /// and idle are picked out under one borrow before any is looked at closely.
    pub(crate) fn start_gc_everywhere_needed(&self) {
        if self.zoned.is_some() {
            return; // a zoned namespace has no GC: the host resets zones
        }
        let soft = self.cfg.gc.soft(self.geo.blocks);
        let idle_and_short: SmallVec<[u32; 8]> = {
            let (blocks, active) = (self.blocks.borrow(), self.gc.active.borrow());
            (0..blocks.planes()).filter(|&p| idle_and_short(p, soft, &blocks, &active)).collect()
        };
        for p in idle_and_short {
            if !self.waits_for_credit(p) && self.could_free_a_block(p) {
                self.start_gc(p);
            }
        }
    }

    /// Collects `plane` until it has its background threshold of free blocks, or until
    /// collecting cannot free another block.
    ///
    /// A victim whose valid units take a whole block of GC pages to move (511 of 512 units in
    /// two-unit pages: the odd one is padded into a page of its own) frees one block and fills
    /// another with a block just like itself; with nothing else writing, a plane whose closed
    /// blocks were all like that was collected forever, and bringing the device to rest never
    /// ended. So GC stops when the plane's stale units, in whole pages, and the rest of its
    /// open GC block no longer add up to a block; such blocks are not victims; and a
    /// collection that programmed a whole block anyway (translation pages move a page each)
    /// ends GC, as it ends the untimed GC. A unit going stale in the plane starts GC again
    /// (see [`invalidate`](Self::invalidate)).
    ///
    /// Paced GC (`GcPacing::Paced`) also stops, above the hard threshold, at a victim that is
    /// not worth collecting at once and that host writes have not yet paid for (see
    /// [`pace`](Self::pace)).
    async fn gc_plane(self: Rc<Self>, plane: u32) {
        let soft = self.cfg.gc.soft(self.geo.blocks);
        loop {
            if let Some(b) = self.next_queued(plane) {
                self.collect(b, Stream::Gc, false).await;
                continue;
            }
            let free = self.blocks.borrow().free_count(plane);
            if free >= soft || !self.could_free_a_block(plane) {
                break;
            }
            let Some(v) = self.pick_gaining_victim(plane) else { break };
            if self.gc.paced && free > self.gc.admit && !self.pays_for(plane, v) {
                break;
            }
            let written = self.collect(v, Stream::Gc, true).await;
            self.stats.borrow_mut().gc_invocations += 1;
            let cold = self.gc.wl.cold(plane, &self.blocks.borrow(), &self.fil.array().borrow());
            if let Some(c) = cold {
                self.collect(c, Stream::Gc, false).await;
                self.stats.borrow_mut().wl_migrations += 1;
            }
            if written >= self.geo.pages {
                break;
            }
        }
        self.gc.active.borrow_mut()[plane as usize] = false;
        self.maybe_drain_pending();
    }

    /// Paced GC: whether background GC may collect `victim` now, spending the plane's credit
    /// if it is a poor one; if not, GC stops and records what it would have gained, so that
    /// the credit or a block becoming worthwhile starts it again.
    fn pays_for(&self, plane: u32, victim: BlockIdx) -> bool {
        let stale = {
            let dftl = self.map.dftl.as_ref().map(|d| d.borrow());
            let cost = moving_cost(&self.geo, &self.fil.array().borrow(), dftl.as_deref(), victim);
            self.geo.units_per_block().saturating_sub(cost)
        };
        if stale >= self.gc.worthwhile {
            return true;
        }
        let mut credit = self.gc.credit.borrow_mut();
        let c = &mut credit[plane as usize];
        if *c >= stale as f64 {
            *c -= stale as f64;
            return true;
        }
        self.gc.stalled.borrow_mut()[plane as usize] = Some(stale);
        false
    }

    /// Paced GC: a page of `plane` went to host data or a translation page, consuming its
    /// space; background GC earns (soft - free) / (soft - hard) of it in stale units to gain
    /// from poor victims (none at the soft threshold, rising to all of it at the hard one, so
    /// poor victims never regain more space than the host consumes), up to a block's worth,
    /// and may start again (the caller starts it) if it stopped for want of them.
    pub(crate) fn pace(&self, plane: u32) {
        let free = self.blocks.borrow().free_count(plane);
        let (soft, hard) = (self.cfg.gc.soft(self.geo.blocks), self.cfg.gc.hard_free);
        if free >= soft || free <= hard {
            return; // no background GC, or foreground GC, which needs no credit
        }
        let earned = (soft - free) as f64 / (soft - hard) as f64 * self.geo.units_per_page() as f64;
        let p = plane as usize;
        let credit = {
            let mut credit = self.gc.credit.borrow_mut();
            credit[p] = (credit[p] + earned).min(self.geo.units_per_block() as f64);
            credit[p]
        };
        let stalled = self.gc.stalled.borrow()[p];
        if stalled.is_some_and(|need| credit >= need as f64) {
            self.gc.stalled.borrow_mut()[p] = None;
        }
    }

    /// Paced GC: a unit of `block` in `plane` went stale; if background GC stopped there for
    /// want of credit and the block just became worth collecting at once, it may start again.
    pub(crate) fn unstall_if_worthwhile(&self, plane: u32, block: BlockIdx) {
        let p = plane as usize;
        if self.gc.stalled.borrow()[p].is_some()
            && self.geo.units_per_block() - self.fil.array().borrow().block(block).valid_units
                == self.gc.worthwhile
        {
            self.gc.stalled.borrow_mut()[p] = None;
        }
    }

    /// Paced GC: whether background GC in `plane` stopped for want of credit (and the plane is
    /// above the hard threshold, where that holds).
    fn waits_for_credit(&self, plane: u32) -> bool {
        self.gc.paced
            && self.gc.stalled.borrow()[plane as usize].is_some()
            && self.blocks.borrow().free_count(plane) > self.gc.admit
    }

    /// Whether collecting `plane` could add a free block: each collection gains at most its
    /// victim's stale units in whole pages, and the plane gains a block once those gains and
    /// the rest of its open GC block fill one. Counts every closed block, programs pending or
    /// not (an upper bound: never false while a block could be gained).
    fn could_free_a_block(&self, plane: u32) -> bool {
        let (upb, upp, pages) = (self.geo.units_per_block(), self.geo.units_per_page(), self.geo.pages);
        let mut room = self.alloc.borrow().pages_left(Stream::Gc, plane);
        let (blocks, array) = (self.blocks.borrow(), self.fil.array().borrow());
        let dftl = self.map.dftl.as_ref().map(|d| d.borrow());
        for b in blocks.plane_blocks(plane) {
            if room >= pages {
                return true;
            }
            if blocks.info(b).usage == BlockUse::Closed {
                room += upb.saturating_sub(moving_cost(&self.geo, &array, dftl.as_deref(), b)) / upp;
            }
        }
        room >= pages
    }

    /// The victim the untimed GC takes next in `plane` under the configured policy, if any
    /// block is not wholly valid.
    pub(crate) fn pick_victim(&self, plane: u32) -> Option<BlockIdx> {
        let array = self.fil.array().borrow();
        victim::pick(&*self.gc.victim, plane, &self.blocks.borrow(), &array, &mut self.rng.borrow_mut())
    }

    /// The victim the timed GC takes next in `plane` under the configured policy, if any
    /// block's units would move in fewer pages than it has.
    fn pick_gaining_victim(&self, plane: u32) -> Option<BlockIdx> {
        let array = self.fil.array().borrow();
        let dftl = self.map.dftl.as_ref().map(|d| d.borrow());
        let (blocks, mut rng) = (self.blocks.borrow(), self.rng.borrow_mut());
        let valid = |b| moving_cost(&self.geo, &array, dftl.as_deref(), b);
        victim::pick_gaining(&*self.gc.victim, plane, &blocks, &self.geo, valid, &mut rng)
    }

    /// Every page of `block` holding valid units, with those units' slots and LPNs (inline for
    /// pages of up to four units: one list for the victim, read in order as GC reaches its
    /// pages, long after it was made).
    pub(crate) fn valid_units_by_page(&self, block: BlockIdx) -> Vec<(nand::PageIdx, PageUnits)> {
        let array = self.fil.array().borrow();
        (0..array.block(block).write_ptr)
            .map(|p| self.geo.page_of(block, p))
            .map(|page| {
                let valid = (0..self.geo.units_per_page())
                    .filter_map(|s| match array.unit(self.geo.unit_addr(page, s)) {
                        UnitState::Valid(lpn) => Some((s, lpn)),
                        _ => None,
                    })
                    .collect::<PageUnits>();
                (page, valid)
            })
            .filter(|(_, v)| !v.is_empty())
            .collect()
    }

    /// Moves every valid unit out of `victim` and erases it. Returns the pages programmed.
    /// Until then the victim and the units moved so far count as in progress. The reads,
    /// programs and erase count for the flow whose data was last programmed into the victim if
    /// `attributed` (GC; wear levelling, refresh and relocation count for no flow).
    pub(crate) async fn collect(&self, victim: BlockIdx, stream: Stream, attributed: bool) -> u32 {
        let (retiring, refreshing, handle, flow) = {
            let blocks = self.blocks.borrow();
            let i = blocks.info(victim);
            (i.retiring, i.refreshing, i.handle, i.flow)
        };
        let flow = if attributed && !retiring && !refreshing { flow } else { FlowTag::NONE };
        // Under persistent FDP isolation, the victim's data stays with its handle.
        let lane = match stream {
            Stream::Gc => self.alloc.borrow().gc_lane(handle),
            _ => Lane::of(stream),
        };
        // FDP: whose data the victim holds, if one handle's only (its units are attributed to
        // it; a shared GC block's, each to the handle it was last written back under).
        let owner = self.fdp_owner(victim);
        self.blocks.borrow_mut().set_victim(victim);
        self.stats.borrow_mut().gc_victims_in_progress += 1;
        let mut moved = 0;
        let plane = self.blocks.borrow().plane_of(victim);
        let upp = self.geo.units_per_page();
        let pages = self.valid_units_by_page(victim);
        let mut pending: Vec<Moved> = Vec::with_capacity(upp as usize);
        let mut written = 0;
        let mut earning = self.earning(victim);
        for (i, (page, units)) in pages.iter().enumerate() {
            let page = *page;
            // The next page's list, for when this page's copy is done (GC of a victim spans
            // milliseconds of other work, so the list is cold by then).
            if let Some(next) = pages.get(i + 1) {
                sim::prefetch(next);
            }
            // Translation pages first, then data, each in slot order (no second list).
            let is_tpage = |(_, l): &&(u32, Lpn)| l.0 >= TRANSLATION_LPN_BASE;
            let tpages = units.iter().filter(is_tpage);
            let data = || units.iter().filter(|u| !is_tpage(u));
            let mut req = FlashRequest::read(TxnSource::Gc, page).for_flow(flow);
            req.want_data = self.payload;
            req.want_parity = self.payload && self.ecc.is_some(); // the ECC decodes the bytes
            // Checked by the ECC like a host read (every codeword of the page crosses the
            // channel), retried down the error model's table.
            self.pin(page);
            let (r, checked, _) = self.read_checked(req, self.whole_page()).await;
            if r.status != FlashStatus::Ok || checked.is_err() {
                // A store failure or an uncorrectable page: its units stay where they are, and
                // the block is not erased below (it leaves circulation, counted).
                self.stats.borrow_mut().media.unmovable_pages += 1;
                continue;
            }
            for &(slot, lpn) in tpages {
                let unit = self.geo.unit_addr(page, slot);
                self.copy_tpage(lpn.0 - TRANSLATION_LPN_BASE, unit, &r, (plane, flow)).await;
                written += 1;
                moved += 1;
                self.earn(plane, &mut earning, upp);
            }
            // Their entries are remapped once the copy is programmed, a flash program later: in
            // the meantime the CPU can fetch them (random LPNs, a cache miss each at full size).
            for (_, lpn) in data() {
                self.map.prefetch(*lpn);
            }
            let born = |slot: u32| r.oob.as_ref().map_or(0, |o| o.born(slot as usize));
            for &(slot, lpn) in data() {
                let unit = Moved {
                    lpn,
                    old: self.geo.unit_addr(page, slot),
                    data: self.unit_of(&r, slot),
                    born: born(slot),
                    handle: owner.unwrap_or_else(|| self.fdp_handle_of(lpn)),
                };
                pending.push(unit);
                if pending.len() == upp as usize {
                    moved += pending.len() as u64;
                    self.gc_write((plane, flow), std::mem::take(&mut pending), lane).await;
                    written += 1;
                    self.earn(plane, &mut earning, upp);
                }
            }
        }
        if !pending.is_empty() {
            let n = pending.len() as u32;
            moved += n as u64;
            self.gc_write((plane, flow), pending, lane).await;
            written += 1;
            self.earn(plane, &mut earning, n);
        }
        if self.erase_block(victim, (TxnSource::Gc, flow)).await {
            let rest = earning.stale - earning.earned;
            self.add_allowance(plane, rest);
        }
        if retiring && moved > 0 {
            self.fdp_reallocated(victim, moved);
        }
        let mut st = self.stats.borrow_mut();
        if retiring {
            st.media.units_relocated += moved;
        } else if refreshing {
            st.media.blocks_refreshed += 1;
            st.media.units_refreshed += moved;
        }
        st.gc_victims_in_progress = st.gc_victims_in_progress.saturating_sub(1);
        st.gc_units_moved_in_progress = st.gc_units_moved_in_progress.saturating_sub(moved);
        written
    }

    /// Programs moved units into one GC page (for `flow`) and points their LPNs at it, unless
    /// the host rewrote them meanwhile.
    async fn gc_write(&self, (plane, flow): (u32, FlowTag), units: Vec<Moved>, lane: Lane) {
        let stream = lane.stream;
        self.cx.compute(self.cfg.costs.gc_unit * units.len() as u64).await;
        let page = self.alloc_page_in(lane, Some(plane), crate::ftl::Placed::DEFAULT).await;
        let image: Vec<(Lpn, UnitData)> = units.iter().map(|u| (u.lpn, u.data.clone())).collect();
        let mut write = self.page_write(&image);
        for (slot, u) in units.iter().enumerate() {
            write.oob.set_born(slot, u.born);
        }
        let n = units.len() as u32;
        let (page, r) = self.program_retrying_for(flow, (lane, stream), Some(plane), page, write, n).await;
        if self.fdp.is_some() {
            self.fdp_gc_moved(units.iter().map(|u| u.handle));
        }
        for u in &units {
            self.map.prefetch(u.lpn); // again, all together, if the program's wait evicted them
        }
        self.make_pending_room(plane, units.len() as u64).await;
        let mut st = self.stats.borrow_mut();
        st.gc_units_moved += units.len() as u64;
        st.gc_units_moved_in_progress += units.len() as u64;
        drop(st);
        for (slot, Moved { lpn, old, .. }) in units.into_iter().enumerate() {
            let new = self.geo.unit_addr(page, slot as u32);
            if r.status == FlashStatus::Ok && self.gc_remap(lpn, old, new) {
                self.invalidate(old);
            } else {
                self.invalidate(new); // the host wrote or trimmed it meanwhile
            }
        }
    }

    /// Copies translation page `t` (read from the victim as `r`, at `old`) into this plane's
    /// GC frontier and points the directory at the copy, unless a rewrite of the page moved it
    /// meanwhile. A copy needs no mapping-stream space, so GC never waits for the space it is
    /// making.
    async fn copy_tpage(
        &self,
        t: u32,
        old: UnitAddr,
        r: &crate::fil::TxnResult,
        (plane, flow): (u32, FlowTag),
    ) {
        let page = self.alloc_page(Stream::Gc, Some(plane)).await;
        let mut oob = Oob::empty(self.geo.units_per_page());
        oob.set(0, OobSlot { lpn: Some(Lpn(TRANSLATION_LPN_BASE + t)), tag: DataTag(t as u16) });
        let (_, slot) = self.geo.unit_page(old);
        oob.set_born(0, r.oob.as_ref().map_or(0, |o| o.born(slot as usize)));
        let write = PageWrite { oob, data: r.data.clone() };
        // Programmed as GC traffic, in the GC queue with the data pages of this block: a page
        // of a block in another queue could overtake the pages before it.
        let lane = (Lane::of(Stream::Gc), Stream::Gc);
        let (page, done) = self.program_retrying_for(flow, lane, Some(plane), page, write, 1).await;
        let new = self.geo.unit_addr(page, 0);
        let dftl = self.map.dftl.as_ref().expect("translation pages exist under DFTL");
        let current = dftl.borrow().location(t) == Some(old);
        if done.status == FlashStatus::Ok && current {
            dftl.borrow_mut().relocate(t, new);
            self.invalidate(old);
        } else {
            self.invalidate(new);
        }
        let mut st = self.stats.borrow_mut();
        st.gc_units_moved += 1;
        st.gc_units_moved_in_progress += 1;
    }

    /// Waits for reads pinning `victim`, erases it for `source` (GC, or a zone reset) and
    /// `flow`, and returns it to the free pool (returns whether it did).
    pub(crate) async fn erase_block(&self, victim: BlockIdx, (source, flow): (TxnSource, FlowTag)) -> bool {
        while self.blocks.borrow().info(victim).pins > 0 {
            self.waits.wait(WaitKey::Unpinned(victim)).await;
        }
        if self.fil.array().borrow().block(victim).valid_units > 0 {
            // A store error or an uncorrectable read left data behind: keep the block out of
            // circulation rather than erase live data.
            return false;
        }
        if self.blocks.borrow().info(victim).retiring {
            self.retire(victim, false); // a program into it failed: it is not erased again
            return false;
        }
        let mut r =
            self.fil.submit(FlashRequest::erase(source, self.geo.page_of(victim, 0)).for_flow(flow)).await;
        let erase_count = self.fil.array().borrow().block(victim).erase_count;
        if r.status == FlashStatus::Ok && self.ecc.as_ref().is_some_and(|e| e.erase_fails(erase_count)) {
            r.set_status(FlashStatus::EraseFailed);
            self.stats.borrow_mut().blocks_erased += 1;
            self.retire(victim, true);
        }
        if r.status != FlashStatus::Ok {
            return false;
        }
        let plane = {
            let mut blocks = self.blocks.borrow_mut();
            blocks.release(victim, erase_count);
            blocks.plane_of(victim)
        };
        self.stats.borrow_mut().blocks_erased += 1;
        self.gained_a_block(plane);
        true
    }

    /// What collecting `victim` earns host writes where they are admitted against GC (see
    /// [`earn`](Self::earn)): its stale units (in what moving costs), spread over the units
    /// that move.
    fn earning(&self, victim: BlockIdx) -> Earning {
        let dftl = self.map.dftl.as_ref().map(|d| d.borrow());
        let cost = moving_cost(&self.geo, &self.fil.array().borrow(), dftl.as_deref(), victim);
        let stale = self.geo.units_per_block().saturating_sub(cost) as f64;
        Earning { stale, per_unit: if cost == 0 { 0.0 } else { stale / cost as f64 }, earned: 0.0 }
    }

    /// GC moved `units` (in what moving costs) out of its victim in `plane`: host writes there
    /// earn the victim's stale units in proportion, so that when it is erased they have been
    /// admitted exactly the space it regains.
    fn earn(&self, plane: u32, e: &mut Earning, units: u32) {
        let x = (units as f64 * e.per_unit).min(e.stale - e.earned);
        e.earned += x;
        self.add_allowance(plane, x);
    }

    /// Adds `units` to the host writes `plane` admits while short (capped at a block), and
    /// wakes a waiting write for every page's worth that becomes available.
    fn add_allowance(&self, plane: u32, units: f64) {
        if !self.gc.admitting || units <= 0.0 {
            return;
        }
        let upp = self.geo.units_per_page() as f64;
        let (old, new) = {
            let mut a = self.gc.allowance.borrow_mut();
            let slot = &mut a[plane as usize];
            let old = *slot;
            *slot = (old + units).min(self.geo.units_per_block() as f64);
            (old, *slot)
        };
        let pages = |x: f64| (x.max(0.0) / upp).ceil() as u64;
        if self.blocks.borrow().free_count(plane) <= self.gc.admit {
            for _ in pages(old)..pages(new) {
                self.waits.notify_one(WaitKey::Room(Stream::User));
            }
        }
    }

    /// A host or mapping page went to `plane`: while the plane is at or below the admission
    /// level, it spends the allowance its GC earned (mapping pages may take it below zero:
    /// they are never held back, GC needs them).
    pub(crate) fn spend_allowance(&self, plane: u32) {
        if self.gc.admitting && self.blocks.borrow().free_count(plane) <= self.gc.admit {
            self.gc.allowance.borrow_mut()[plane as usize] -= self.geo.units_per_page() as f64;
        }
    }
}

/// The host-write allowance one collection earns (see [`FtlInner::earn`]).
struct Earning {
    /// The victim's stale units: what collecting it regains.
    stale: f64,
    /// Earned per unit moved.
    per_unit: f64,
    /// Earned so far.
    earned: f64,
}

/// Whether `plane` has fewer than `soft` free blocks and no GC task running (`active`, by plane).
fn idle_and_short(plane: u32, soft: u32, blocks: &BlockManager, active: &[bool]) -> bool {
    !active[plane as usize] && blocks.free_count(plane) < soft
}

/// A valid unit on its way out of a victim block.
struct Moved {
    lpn: Lpn,
    /// Where it was.
    old: UnitAddr,
    data: UnitData,
    /// The sequence number of the program that first wrote the data (kept in the copy's OOB,
    /// so that recovery never prefers this copy to a newer host write).
    born: u64,
    /// FDP: the reclaim unit handle whose data it is (0 without FDP).
    handle: u16,
}

/// `block`'s valid units in what moving them costs: a translation page is one valid unit but
/// moves into a page of its own, so it counts as a page's worth. Without this, blocks of
/// translation pages look half empty to greedy GC, and collecting one programs a block of GC
/// pages to gain nothing.
fn moving_cost(
    geo: &nand::Geometry,
    array: &nand::FlashArray,
    dftl: Option<&crate::ftl::map::Dftl>,
    block: BlockIdx,
) -> u32 {
    let valid = array.block(block).valid_units;
    match dftl {
        Some(d) => valid + (geo.units_per_page() - 1) * d.tpages_in(block),
        None => valid,
    }
}
