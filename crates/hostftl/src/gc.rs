//! Host-scheduled garbage collection. The host decides when: a plane short of free blocks
//! starts a GC thread on the host's GC core, which defers while the host is in a write burst
//! (more host writes in flight than `gc.burst`) unless the plane is down to its hard
//! threshold; and which: the device's victim policy (the firmware's
//! [`victim::pick_by`](firmware::ftl::victim::pick_by)), or a block the host names
//! ([`HostFtl::collect_block`]). A victim's valid units are read, written to the GC stream of
//! its plane, remapped unless rewritten meanwhile, and the block erased once no read pins it.

use std::rc::Rc;

use firmware::fil::TxnSource;
use firmware::ftl::{Stream, UnitData, victim};
use nand::{BlockIdx, DataTag, Lpn, PageIdx, UnitState};
use raw::{RawCommand, RawOp, RawStatus};

use crate::error::{GcRequestError, not_collectable};
use crate::ftl::{HostFtl, Inner};

/// A valid unit on its way out of a victim.
struct Moved {
    lpn: u32,
    old: nand::UnitAddr,
    data: UnitData,
    born: u64,
}

impl HostFtl {
    /// Collects `block` now, as the host asks: the block must hold data and be closed, with
    /// no programs pending. Returns once it is erased.
    pub async fn collect_block(&self, block: u32) -> Result<(), GcRequestError> {
        let i = &self.inner;
        let blocks = i.geo.total_blocks();
        if block >= blocks {
            return Err(GcRequestError::NoBlock { block, blocks });
        }
        let info = *i.blocks.borrow().info(BlockIdx(block));
        if let Some(why) = not_collectable(info.usage, info.pending) {
            return Err(GcRequestError::InUse { block, why });
        }
        i.collect(BlockIdx(block)).await;
        i.stats.borrow_mut().gc_invocations += 1;
        Ok(())
    }

    /// Times GC waited because the host was in a write burst.
    pub fn gc_deferrals(&self) -> u64 {
        self.inner.deferrals.get()
    }
}

impl Inner {
    /// Starts GC in `plane` if it is short of free blocks and none runs there.
    pub fn maybe_gc(self: &Rc<Self>, plane: u32) {
        let soft = self.policy.gc.soft(self.geo.blocks);
        if self.blocks.borrow().free_count(plane) >= soft || self.gc_active.borrow()[plane as usize] {
            return;
        }
        self.gc_active.borrow_mut()[plane as usize] = true;
        let me = self.clone();
        self.cx.spawn(
            self.gc_core,
            format!("host gc plane {plane}"),
            async move { me.gc_plane(plane).await },
        );
    }

    /// A write found no room: counts it, starts GC wherever a plane is short, and waits for a
    /// block to be erased.
    pub async fn wait_for_space(self: &Rc<Self>) {
        self.stats.borrow_mut().foreground_gc_waits += 1;
        for p in 0..self.blocks.borrow().planes() {
            self.maybe_gc(p);
        }
        self.space.notified().await;
    }

    async fn gc_plane(self: Rc<Self>, plane: u32) {
        let (soft, hard) = (self.policy.gc.soft(self.geo.blocks), self.policy.gc.hard_free);
        loop {
            let free = self.blocks.borrow().free_count(plane);
            if free >= soft {
                break;
            }
            let g = &self.cfg.gc;
            if g.defer && self.writes.get() > g.burst && free > hard + 1 {
                self.deferrals.set(self.deferrals.get() + 1);
                self.cx.sleep(g.poll).await;
                continue;
            }
            let picked = {
                let array = self.raw.fil().array().borrow();
                let upb = self.geo.units_per_block();
                victim::pick_by(
                    &*self.policy.gc.victim.picker(),
                    plane,
                    &self.blocks.borrow(),
                    upb,
                    |b| array.block(b).valid_units,
                    &mut self.rng.borrow_mut(),
                )
            };
            let Some(v) = picked else { break };
            self.collect(v).await;
            self.stats.borrow_mut().gc_invocations += 1;
        }
        self.gc_active.borrow_mut()[plane as usize] = false;
    }

    /// The pages of `block` holding valid units, with those units' slots and LPNs.
    fn valid_by_page(&self, block: BlockIdx) -> Vec<(PageIdx, Vec<(u32, u32)>)> {
        let array = self.raw.fil().array().borrow();
        (0..array.block(block).write_ptr)
            .map(|p| self.geo.page_of(block, p))
            .map(|page| {
                let valid = (0..self.geo.units_per_page())
                    .filter_map(|s| match array.unit(self.geo.unit_addr(page, s)) {
                        UnitState::Valid(l) => Some((s, l.0)),
                        _ => None,
                    })
                    .collect::<Vec<_>>();
                (page, valid)
            })
            .filter(|(_, v)| !v.is_empty())
            .collect()
    }

    /// Moves `victim`'s valid units to its plane's GC frontier and erases it.
    pub async fn collect(self: &Rc<Self>, victim: BlockIdx) {
        self.blocks.borrow_mut().set_victim(victim);
        let plane = self.plane_of(victim);
        let upp = self.geo.units_per_page() as usize;
        let ub = self.geo.unit_bytes() as usize;
        let mut moved = Vec::new();
        for (page, units) in self.valid_by_page(victim) {
            let cmd = RawCommand {
                op: RawOp::Read { bytes: 0, want_data: self.payload },
                source: TxnSource::Gc,
                ppas: vec![self.geo.ppa(page)],
            };
            let c = self.raw.submit(cmd).await;
            let Some(r) = c.results.first().filter(|_| c.status == RawStatus::Ok) else { continue };
            for (slot, lpn) in units {
                let data = match &r.data {
                    Some(d) => UnitData::Bytes(d[slot as usize * ub..(slot as usize + 1) * ub].into()),
                    None => UnitData::Tag(r.oob.as_ref().map_or(DataTag(0), |o| o.tag(slot as usize))),
                };
                let born = r.oob.as_ref().map_or(0, |o| o.born(slot as usize));
                moved.push(Moved { lpn, old: self.geo.unit_addr(page, slot), data, born });
            }
        }
        self.cpu(self.cfg.costs.gc_unit * moved.len() as u64).await;
        for chunk in moved.chunks(upp) {
            self.gc_write(plane, chunk).await;
        }
        while self.blocks.borrow().info(victim).pins > 0 {
            self.unpinned.notified().await;
        }
        if self.raw.fil().array().borrow().block(victim).valid_units > 0 {
            return; // a store error left data behind: keep the block out of circulation
        }
        let cmd = RawCommand {
            op: RawOp::Erase,
            source: TxnSource::Gc,
            ppas: vec![self.geo.ppa(self.geo.page_of(victim, 0))],
        };
        if self.raw.submit(cmd).await.status != RawStatus::Ok {
            return;
        }
        let erases = self.raw.fil().array().borrow().block(victim).erase_count;
        self.blocks.borrow_mut().release(victim, erases);
        self.stats.borrow_mut().blocks_erased += 1;
        self.space.notify_all();
    }

    /// Programs moved units into one GC page of `plane` and points their LPNs at it, unless
    /// the host rewrote or trimmed them meanwhile.
    async fn gc_write(self: &Rc<Self>, plane: u32, units: &[Moved]) {
        let page = loop {
            let p = self.placer.borrow_mut().gc_page(plane, &mut self.blocks.borrow_mut());
            match p {
                Some(p) => break p,
                None => self.space.notified().await,
            }
        };
        let mut oob = nand::Oob::empty(self.geo.units_per_page());
        let mut data = self.payload.then(|| vec![0u8; self.geo.page_bytes() as usize]);
        let ub = self.geo.unit_bytes() as usize;
        for (slot, u) in units.iter().enumerate() {
            oob.set(slot, nand::OobSlot { lpn: Some(Lpn(u.lpn)), tag: u.data.tag() });
            oob.set_born(slot, u.born);
            if let (Some(p), UnitData::Bytes(b)) = (data.as_mut(), &u.data) {
                p[slot * ub..slot * ub + b.len()].copy_from_slice(b);
            }
        }
        let write = firmware::fil::PageWrite { oob, data: data.map(Vec::into_boxed_slice) };
        let cmd = RawCommand {
            op: RawOp::Program { writes: vec![write] },
            source: TxnSource::Gc,
            ppas: vec![self.geo.ppa(page)],
        };
        let c = self.raw.submit(cmd).await;
        self.blocks.borrow_mut().done_pending(self.geo.block_of(page), 1);
        self.placer.borrow_mut().done(page);
        let ok = c.status == RawStatus::Ok;
        for (slot, u) in units.iter().enumerate() {
            let new = self.geo.unit_addr(page, slot as u32);
            if ok && self.lookup(Lpn(u.lpn)) == Some(u.old) {
                self.remap(Lpn(u.lpn), Some(new));
                self.invalidate(u.old);
            } else if ok {
                self.invalidate(new);
            }
        }
        let mut st = self.stats.borrow_mut();
        st.gc_units_moved += units.len() as u64;
        st.pages_programmed[Stream::Gc as usize] += 1;
        st.units_programmed[Stream::Gc as usize] += units.len() as u64;
    }
}
