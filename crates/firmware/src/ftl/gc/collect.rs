//! Collecting a victim: move its valid units to the GC stream of the same plane (translation
//! pages are rewritten through DFTL), wait for reads that still use it, erase it, and return it
//! to the free pool. One GC task per plane runs while the plane is short of free blocks.

use std::rc::Rc;

use nand::{BlockIdx, Lpn, UnitAddr, UnitState};

use crate::fil::{FlashRequest, FlashStatus, TxnSource};
use crate::ftl::blocks::Stream;
use crate::ftl::config::TRANSLATION_LPN_BASE;
use crate::ftl::data::UnitData;
use crate::ftl::gc::victim;
use crate::ftl::state::FtlInner;
use crate::ftl::waits::WaitKey;

impl FtlInner {
    /// Starts background GC in `plane` if it is short of free blocks and none is running.
    pub(crate) fn maybe_start_gc(&self, plane: u32) {
        let soft = self.cfg.gc.soft(self.geo.blocks);
        if self.blocks.borrow().free_count(plane) >= soft || self.gc_active.borrow()[plane as usize] {
            return;
        }
        self.gc_active.borrow_mut()[plane as usize] = true;
        let me = self.self_rc();
        self.cx.spawn(self.core, format!("gc plane {plane}"), async move { me.gc_plane(plane).await });
    }

    /// Starts GC in every plane that needs it (a write found no room anywhere).
    pub(crate) fn start_gc_everywhere_needed(&self) {
        for p in 0..self.blocks.borrow().planes() {
            self.maybe_start_gc(p);
        }
    }

    async fn gc_plane(self: Rc<Self>, plane: u32) {
        let soft = self.cfg.gc.soft(self.geo.blocks);
        loop {
            if self.blocks.borrow().free_count(plane) >= soft {
                break;
            }
            let v = {
                let array = self.fil.array().borrow();
                victim::pick(
                    self.cfg.gc.victim,
                    plane,
                    &self.blocks.borrow(),
                    &array,
                    &mut self.rng.borrow_mut(),
                )
            };
            let Some(v) = v else { break };
            self.collect(v, Stream::Gc).await;
            self.stats.borrow_mut().gc_invocations += 1;
            if let Some(threshold) = self.cfg.wl.static_threshold {
                let cold = victim::cold(plane, threshold, &self.blocks.borrow(), &self.fil.array().borrow());
                if let Some(c) = cold {
                    self.collect(c, Stream::Gc).await;
                    self.stats.borrow_mut().wl_migrations += 1;
                }
            }
        }
        self.gc_active.borrow_mut()[plane as usize] = false;
    }

    /// Moves every valid unit out of `victim` and erases it.
    pub(crate) async fn collect(&self, victim: BlockIdx, stream: Stream) {
        self.blocks.borrow_mut().set_victim(victim);
        let plane = self.blocks.borrow().plane_of(victim);
        let upp = self.geo.units_per_page();
        let pages: Vec<(nand::PageIdx, Vec<(u32, Lpn)>)> = {
            let array = self.fil.array().borrow();
            (0..array.block(victim).write_ptr)
                .map(|p| self.geo.page_of(victim, p))
                .map(|page| {
                    let valid = (0..upp)
                        .filter_map(|s| match array.unit(self.geo.unit_addr(page, s)) {
                            UnitState::Valid(lpn) => Some((s, lpn)),
                            _ => None,
                        })
                        .collect::<Vec<_>>();
                    (page, valid)
                })
                .filter(|(_, v)| !v.is_empty())
                .collect()
        };
        let mut pending: Vec<(Lpn, UnitAddr, UnitData)> = Vec::with_capacity(upp as usize);
        for (page, units) in pages {
            let (tpages, data): (Vec<_>, Vec<_>) =
                units.into_iter().partition(|(_, l)| l.0 >= TRANSLATION_LPN_BASE);
            for (_, lpn) in tpages {
                self.move_tpage(lpn.0 - TRANSLATION_LPN_BASE, victim).await;
            }
            if data.is_empty() {
                continue;
            }
            let mut req = FlashRequest::read(TxnSource::Gc, page);
            req.want_data = self.payload;
            let r = self.fil.submit(req).await;
            if r.status != FlashStatus::Ok {
                continue; // store failure: the units stay where they are; erase is skipped below
            }
            for (slot, lpn) in data {
                pending.push((lpn, self.geo.unit_addr(page, slot), self.unit_of(&r, slot)));
                if pending.len() == upp as usize {
                    self.gc_write(plane, std::mem::take(&mut pending), stream).await;
                }
            }
        }
        if !pending.is_empty() {
            self.gc_write(plane, pending, stream).await;
        }
        self.erase_victim(victim).await;
    }

    /// Programs moved units into one GC page and points their LPNs at it, unless the host
    /// rewrote them meanwhile.
    async fn gc_write(&self, plane: u32, units: Vec<(Lpn, UnitAddr, UnitData)>, stream: Stream) {
        self.cx.compute(self.cfg.costs.gc_unit * units.len() as u64).await;
        let page = self.alloc_page(stream, Some(plane)).await;
        let image: Vec<(Lpn, UnitData)> = units.iter().map(|(l, _, d)| (*l, d.clone())).collect();
        let write = self.page_write(&image);
        let r = self.program(stream, page, write, units.len() as u32).await;
        self.stats.borrow_mut().gc_units_moved += units.len() as u64;
        for (slot, (lpn, old, _)) in units.into_iter().enumerate() {
            let new = self.geo.unit_addr(page, slot as u32);
            if r.status == FlashStatus::Ok && self.map_cas(lpn, old, new).await {
                self.invalidate(old);
            } else {
                self.invalidate(new); // the host wrote or trimmed it meanwhile
            }
        }
    }

    /// Rewrites translation page `t` if its current copy is in `victim`.
    async fn move_tpage(&self, t: u32, victim: BlockIdx) {
        let here = self.dftl.as_ref().and_then(|d| d.borrow().location(t));
        if here.is_some_and(|u| self.geo.block_of(self.geo.unit_page(u).0) == victim) {
            self.tpage_write(t).await;
        }
    }

    /// Waits for reads pinning `victim`, erases it and returns it to the free pool.
    async fn erase_victim(&self, victim: BlockIdx) {
        while self.blocks.borrow().info(victim).pins > 0 {
            self.waits.wait(WaitKey::Unpinned(victim)).await;
        }
        if self.fil.array().borrow().block(victim).valid_units > 0 {
            // A store error left data behind: keep the block out of circulation rather than
            // erase live data.
            return;
        }
        let r = self.fil.erase(TxnSource::Gc, self.geo.page_of(victim, 0)).await;
        if r.status != FlashStatus::Ok {
            return;
        }
        let erase_count = self.fil.array().borrow().block(victim).erase_count;
        self.blocks.borrow_mut().release(victim, erase_count);
        self.stats.borrow_mut().blocks_erased += 1;
        self.waits.notify(WaitKey::Space);
    }
}
