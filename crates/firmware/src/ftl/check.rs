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
    pub fn check_invariants(&self) -> Result<(), Violation> {
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
                    return Err(Violation::ForwardMap { lpn, unit: u.0, state: st });
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
                            return Err(Violation::ReverseMap { unit: u.0, lpn: lpn.0, owner });
                        }
                    }
                }
            }
            if valid != array.block(block).valid_units {
                return Err(Violation::ValidCount {
                    block: b,
                    counted: valid,
                    recorded: array.block(block).valid_units,
                });
            }
        }
        // Blocks add up.
        let [free, open, closed, victim, bad] = blocks.census();
        let pooled: u64 = (0..blocks.planes()).map(|p| blocks.free_count(p) as u64).sum();
        if free + open + closed + victim + bad != geo.total_blocks() as u64 || pooled != free {
            return Err(Violation::Census {
                census: [free, open, closed, victim, bad],
                pooled,
                blocks: geo.total_blocks(),
            });
        }
        if victim != 0 {
            return Err(Violation::Victims(victim));
        }
        for b in 0..geo.total_blocks() {
            let info = blocks.info(nand::BlockIdx(b));
            if info.pending != 0 || info.pins != 0 {
                return Err(Violation::InFlight { block: b, programs: info.pending, reads: info.pins });
            }
            if info.usage == BlockUse::Free && array.block(nand::BlockIdx(b)).write_ptr != 0 {
                return Err(Violation::FreeButProgrammed(b));
            }
        }
        // Translation directory.
        if let Some(d) = &i.map.dftl {
            let d = d.borrow();
            if d.pending_pages() != 0 {
                return Err(Violation::TranslationPagesBehind(d.pending_pages()));
            }
            for t in 0..d.tpages() {
                if let Some(u) = d.location(t) {
                    let st = array.unit(u);
                    if st != UnitState::Valid(Lpn(TRANSLATION_LPN_BASE + t)) {
                        return Err(Violation::Directory { tpage: t, unit: u.0, state: st });
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
                            return Err(Violation::CleanSegment { segment: seg, tpage: t, entries: per });
                        }
                    }
                }
            }
        }
        // FDP: a block opened for a reclaim unit handle holds that handle's data only (host
        // data always; GC's moves too under persistent isolation).
        if let Some(f) = &i.fdp {
            let f = f.borrow();
            let persistent = f.cfg.isolation == crate::ftl::fdp::Isolation::Persistently;
            for b in 0..geo.total_blocks() {
                let block = nand::BlockIdx(b);
                let info = blocks.info(block);
                let own = match info.stream {
                    crate::ftl::Stream::User => true,
                    crate::ftl::Stream::Gc => persistent,
                    crate::ftl::Stream::Mapping => false,
                };
                if !own || matches!(info.usage, BlockUse::Free | BlockUse::Bad) {
                    continue;
                }
                for p in 0..array.block(block).write_ptr {
                    let page = geo.page_of(block, p);
                    for s in 0..geo.units_per_page() {
                        if let UnitState::Valid(lpn) = array.unit(geo.unit_addr(page, s))
                            && lpn.0 < TRANSLATION_LPN_BASE
                            && f.lpn_handle[lpn.0 as usize] as u16 != info.handle
                        {
                            return Err(Violation::MixedHandles {
                                block: b,
                                handle: info.handle,
                                lpn: lpn.0,
                                its: f.lpn_handle[lpn.0 as usize] as u16,
                            });
                        }
                    }
                }
            }
        }
        // Cache.
        let c = i.cache.borrow();
        if c.filling_count() != 0 || c.writing_count() != 0 {
            return Err(Violation::CacheBusy { filling: c.filling_count(), writing: c.writing_count() });
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

/// The first invariant a check found broken (a firmware bug: the description is for whoever
/// debugs it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// The forward map points at a unit that does not hold the LPN.
    #[error("LPN {lpn} maps to unit {unit} which is {state:?}")]
    ForwardMap {
        /// The LPN.
        lpn: u32,
        /// Where the map points.
        unit: u32,
        /// What that unit holds.
        state: UnitState,
    },
    /// A valid unit the map does not point at.
    #[error("unit {unit} holds LPN {lpn} valid, but the map points to {owner:?}")]
    ReverseMap {
        /// The unit.
        unit: u32,
        /// The LPN it holds.
        lpn: u32,
        /// Where the map points instead.
        owner: Option<UnitAddr>,
    },
    /// A block's valid-unit count is wrong.
    #[error("block {block}: {counted} valid units, count says {recorded}")]
    ValidCount {
        /// The block.
        block: u32,
        /// Valid units counted.
        counted: u32,
        /// The block's count.
        recorded: u32,
    },
    /// The blocks by use (free, open, closed, victim, bad) do not add up.
    #[error(
        "block census {}+{}+{}+{}+{} (pooled {pooled}) != {blocks}",
        census[0], census[1], census[2], census[3], census[4]
    )]
    Census {
        /// Free, open, closed, victim and bad blocks.
        census: [u64; 5],
        /// Blocks in the free pools.
        pooled: u64,
        /// Blocks in the array.
        blocks: u32,
    },
    /// Blocks left marked as GC victims.
    #[error("{0} blocks still marked as GC victims")]
    Victims(u64),
    /// Programs or reads of a block still in flight.
    #[error("block {block}: {programs} programs and {reads} reads still in flight")]
    InFlight {
        /// The block.
        block: u32,
        /// Programs pending.
        programs: u32,
        /// Reads pinning it.
        reads: u32,
    },
    /// A programmed block in a free pool.
    #[error("block {0} is in a free pool but programmed")]
    FreeButProgrammed(u32),
    /// Translation pages GC changed and the flusher has not rewritten.
    #[error("{0} translation pages still behind the map GC changed")]
    TranslationPagesBehind(u32),
    /// The translation directory points at a unit that does not hold the page.
    #[error("translation page {tpage} is at unit {unit} which is {state:?}")]
    Directory {
        /// The translation page.
        tpage: u32,
        /// Where the directory points.
        unit: u32,
        /// What that unit holds.
        state: UnitState,
    },
    /// A clean CMT segment that differs from its translation page.
    #[error("clean segment {segment} differs from translation page {tpage} ({entries} entries)")]
    CleanSegment {
        /// The segment.
        segment: u32,
        /// Its translation page.
        tpage: u32,
        /// Entries per translation page.
        entries: usize,
    },
    /// FDP: a block of one reclaim unit handle holds data of another.
    #[error("block {block} of reclaim unit handle {handle} holds LPN {lpn} of handle {its}")]
    MixedHandles {
        /// The block.
        block: u32,
        /// Its handle.
        handle: u16,
        /// A valid LPN in it.
        lpn: u32,
        /// The handle that LPN was written under.
        its: u16,
    },
    /// Cache lines still in transition.
    #[error("{filling} lines filling, {writing} being written back")]
    CacheBusy {
        /// Lines being filled.
        filling: u32,
        /// Lines being written back.
        writing: u32,
    },
}
