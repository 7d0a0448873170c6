//! Invariants a correct FTL keeps, checked when no request is in flight: the forward and
//! reverse maps agree, valid counts match the units, blocks add up, the translation directory
//! matches the translation pages, and the cache holds nothing in transition.

use nand::{Lpn, UnitAddr, UnitState};

use crate::ftl::blocks::BlockUse;
use crate::ftl::config::TRANSLATION_LPN_BASE;
use crate::ftl::state::Ftl;

impl Ftl {
    /// Checks every invariant; the error describes the first violation. Call only when the
    /// simulation is idle (no request, write-back or GC in flight).
    pub fn check_invariants(&self) -> Result<(), String> {
        let i = &*self.inner;
        let geo = &i.geo;
        let array = i.fil.array().borrow();
        let l2p = i.map.l2p.borrow();
        let blocks = i.blocks.borrow();
        // Forward map -> array.
        for lpn in 0..i.logical {
            if let Some(u) = l2p.get(Lpn(lpn)) {
                let st = array.unit(u);
                if st != UnitState::Valid(Lpn(lpn)) {
                    return Err(format!("LPN {lpn} maps to unit {} which is {st:?}", u.0));
                }
            }
        }
        // Array -> reverse map, and valid counts.
        for b in 0..geo.total_blocks() {
            let block = nand::BlockIdx(b);
            let mut valid = 0;
            for p in 0..array.block(block).write_ptr {
                let page = geo.page_of(block, p);
                for s in 0..geo.units_per_page() {
                    let u = geo.unit_addr(page, s);
                    if let UnitState::Valid(lpn) = array.unit(u) {
                        valid += 1;
                        let owner = self.owner_of(lpn);
                        if owner != Some(u) {
                            return Err(format!(
                                "unit {} holds LPN {} valid, but the map points to {owner:?}",
                                u.0, lpn.0
                            ));
                        }
                    }
                }
            }
            if valid != array.block(block).valid_units {
                return Err(format!(
                    "block {b}: {valid} valid units, count says {}",
                    array.block(block).valid_units
                ));
            }
        }
        // Blocks add up.
        let [free, open, closed, victim, bad] = blocks.census();
        let pooled: u64 = (0..blocks.planes()).map(|p| blocks.free_count(p) as u64).sum();
        if free + open + closed + victim + bad != geo.total_blocks() as u64 || pooled != free {
            return Err(format!(
                "block census {free}+{open}+{closed}+{victim}+{bad} (pooled {pooled}) != {}",
                geo.total_blocks()
            ));
        }
        if victim != 0 {
            return Err(format!("{victim} blocks still marked as GC victims"));
        }
        for b in 0..geo.total_blocks() {
            let info = blocks.info(nand::BlockIdx(b));
            if info.pending != 0 || info.pins != 0 {
                return Err(format!(
                    "block {b}: {} programs and {} reads still in flight",
                    info.pending, info.pins
                ));
            }
            if info.usage == BlockUse::Free && array.block(nand::BlockIdx(b)).write_ptr != 0 {
                return Err(format!("block {b} is in a free pool but programmed"));
            }
        }
        // Translation directory.
        if let Some(d) = &i.map.dftl {
            let d = d.borrow();
            if d.pending != 0 {
                return Err(format!("{} translation pages still behind the map GC changed", d.pending));
            }
            for t in 0..d.tpages() {
                if let Some(u) = d.location(t) {
                    let st = array.unit(u);
                    if st != UnitState::Valid(Lpn(TRANSLATION_LPN_BASE + t)) {
                        return Err(format!("translation page {t} is at unit {} which is {st:?}", u.0));
                    }
                }
                if let Some(on_flash) = &d.on_flash {
                    let per = d.entries_per_tpage as usize;
                    for seg in d.segments_of(t) {
                        if d.cmt.is_dirty(seg) {
                            continue;
                        }
                        let first = (seg * d.segment_entries) as usize;
                        let n = (d.segment_entries as usize).min(i.logical as usize - first);
                        if l2p.raw(first..first + n) != &on_flash[first..first + n] {
                            return Err(format!(
                                "clean segment {seg} differs from translation page {t} ({per} entries)"
                            ));
                        }
                    }
                }
            }
        }
        // Cache.
        let c = i.cache.borrow();
        if c.filling_count() != 0 || c.writing_count() != 0 {
            return Err(format!(
                "{} lines filling, {} being written back",
                c.filling_count(),
                c.writing_count()
            ));
        }
        Ok(())
    }

    /// Where the map says `lpn` (a host LPN or a translation-page tag) lives.
    fn owner_of(&self, lpn: Lpn) -> Option<UnitAddr> {
        if lpn.0 >= TRANSLATION_LPN_BASE {
            let t = lpn.0 - TRANSLATION_LPN_BASE;
            return self.inner.map.dftl.as_ref().and_then(|d| d.borrow().location(t));
        }
        self.inner.map.get(lpn)
    }
}
