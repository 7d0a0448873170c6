//! Bad-block management: grown bad blocks, the spare pool, and end of life.
//!
//! ```text
//!   program fails ─► block retiring: no more pages, queued ─► its plane's GC moves the valid
//!                    (the page's data is written again)        data out first ─► retired (bad)
//!   erase fails   ─► retired at once (it held nothing)
//!   a plane's spare blocks down to the end-of-life level ─► the device is read-only
//! ```
//!
//! Failures are drawn by the ECC's error model ([`crate::ecc::Ecc::program_fails`]); without
//! `[ecc.errors]` nothing fails. Retired blocks are marked bad in the array (and in a NAND
//! image), so a restart keeps them out.
//!
//! **Spares.** A plane needs `data` blocks for its share of the logical capacity (and of the
//! translation pages under DFTL); its good blocks beyond those are its spares. GC cannot work
//! below `soft_free + 2` spare blocks (the least a configuration is allowed to start with), so
//! when any plane's spares fall to that level the device goes read-only: host writes, trims
//! and write-zeroes fail with "namespace is write protected" (NVMe 20h), reads go on, and data
//! already acknowledged still reaches flash. SMART's available spare is the worst plane's
//! spares above that level as a percentage of a perfect plane's.

use std::cell::{Cell, RefCell};

use nand::{BlockIdx, Geometry, UnitState};
use serde::{Deserialize, Serialize};
use sim::SimTime;

use crate::fil::{FlashStatus, TxnResult};
use crate::ftl::blocks::{BlockManager, BlockUse, Stream};
use crate::ftl::state::FtlInner;

/// What bad-block management counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MediaStats {
    /// Page programs that failed (their data was written again elsewhere).
    pub program_failures: u64,
    /// Block erases that failed.
    pub erase_failures: u64,
    /// Blocks retired during the run (grown bad blocks): after a failed program once their
    /// data had moved, or at a failed erase.
    pub grown_bad_blocks: u64,
    /// Valid units moved out of retiring blocks (part of GC's moved units).
    pub units_relocated: u64,
    /// The fewest spare blocks any plane had left (see the module docs); `None` before any
    /// block was retired.
    pub min_spare_blocks: Option<u32>,
    /// When the device went read-only (its spares ran out), if it did.
    pub read_only_at: Option<SimTime>,
    /// Pages GC could not read (uncorrectable, or the page store failed): their units stay in
    /// the victim, which is then left out of circulation rather than erased.
    pub unmovable_pages: u64,
    /// Translation-page reads that were uncorrectable (counted only: the map is in DRAM).
    pub unreadable_tpages: u64,
    /// Data refresh: scans of every closed block (see `ftl.refresh`).
    pub refresh_scans: u64,
    /// Blocks data refresh rewrote (moved their data out and erased).
    pub blocks_refreshed: u64,
    /// Valid units those rewrites moved (part of GC's moved units).
    pub units_refreshed: u64,
}

impl MediaStats {
    /// Adds `b`'s counts to these (several FTLs side by side).
    pub fn merge(&mut self, b: &MediaStats) {
        self.program_failures += b.program_failures;
        self.erase_failures += b.erase_failures;
        self.grown_bad_blocks += b.grown_bad_blocks;
        self.units_relocated += b.units_relocated;
        self.unmovable_pages += b.unmovable_pages;
        self.unreadable_tpages += b.unreadable_tpages;
        self.refresh_scans += b.refresh_scans;
        self.blocks_refreshed += b.blocks_refreshed;
        self.units_refreshed += b.units_refreshed;
        self.min_spare_blocks = match (self.min_spare_blocks, b.min_spare_blocks) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.read_only_at = match (self.read_only_at, b.read_only_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// The bad-block part of the FTL.
pub(crate) struct BadBlocks {
    /// Per plane: blocks whose data must move (retiring ones, and those data refresh picked),
    /// waiting for their plane's GC, which takes them before any other victim.
    pub queue: RefCell<Vec<Vec<BlockIdx>>>,
    /// Blocks a plane needs for its share of the data and translation pages.
    pub needed: u32,
    /// Spare blocks at which the device goes read-only.
    pub end_of_life: u32,
    /// The device is read-only: its spares ran out.
    pub read_only: Cell<bool>,
}

impl BadBlocks {
    /// The part for `logical` units (and `tpages` translation pages) over `geo`, read-only
    /// at `end_of_life` spare blocks in a plane.
    pub fn new(geo: &Geometry, logical: u32, tpages: u32, end_of_life: u32) -> BadBlocks {
        let planes = (geo.total_dies() * geo.planes) as u64;
        let units = logical as u64 + tpages as u64 * geo.units_per_page() as u64;
        let needed = units.div_ceil(planes * geo.units_per_block() as u64) as u32;
        BadBlocks {
            queue: RefCell::new(vec![Vec::new(); planes as usize]),
            needed,
            end_of_life,
            read_only: Cell::new(false),
        }
    }

    /// `plane`'s spare blocks: good blocks beyond those its data needs.
    pub fn spares(&self, blocks: &BlockManager, plane: u32) -> u32 {
        blocks.good_in(plane).saturating_sub(self.needed)
    }

    /// Available spare as SMART reports it: the worst plane's spares above the end-of-life
    /// level, as a percentage of a plane with no bad block (`blocks` per plane).
    pub fn available_percent(&self, blocks: &BlockManager, per_plane: u32) -> f64 {
        let full = per_plane.saturating_sub(self.needed).saturating_sub(self.end_of_life).max(1);
        let worst = (0..blocks.planes()).map(|p| self.spares(blocks, p)).min().unwrap_or(0);
        worst.saturating_sub(self.end_of_life) as f64 / full as f64 * 100.0
    }
}

impl FtlInner {
    /// Settles a program of `page` for `stream` (holding `units` valid units) that ended as
    /// `r`: counts it and, under the error model, draws whether the NAND failed it. A failed
    /// program's page holds nothing usable (its units are made stale), its status becomes
    /// [`FlashStatus::ProgramFailed`] (the caller writes the data again), and its block is
    /// retired once its other data has moved.
    pub fn settle_program(&self, stream: Stream, page: nand::PageIdx, units: u32, r: &mut TxnResult) {
        self.programmed(stream, page, units);
        let Some(ecc) = &self.ecc else { return };
        let block = self.geo.block_of(page);
        let erase_count = self.fil.array().borrow().block(block).erase_count;
        if r.status != FlashStatus::Ok || !ecc.program_fails(erase_count) {
            return;
        }
        r.set_status(FlashStatus::ProgramFailed);
        self.stats.borrow_mut().media.program_failures += 1;
        let valid: Vec<_> = (0..self.geo.units_per_page())
            .map(|s| self.geo.unit_addr(page, s))
            .filter(|&u| matches!(self.fil.array().borrow().unit(u), UnitState::Valid(_)))
            .collect();
        for u in valid {
            self.invalidate(u);
        }
        self.retire_later(block);
    }

    /// A program into `block` failed: it takes no more pages, and its plane's GC moves its
    /// valid data out and retires it (before any other victim).
    fn retire_later(&self, block: BlockIdx) {
        let plane = {
            let mut blocks = self.blocks.borrow_mut();
            if !blocks.mark_retiring(block) {
                return;
            }
            self.alloc.borrow_mut().abandon(block, &mut blocks);
            blocks.plane_of(block)
        };
        self.bad.queue.borrow_mut()[plane as usize].push(block);
        self.kick_relocation(plane);
    }

    /// Starts `plane`'s GC if a queued block there (retiring or due for refresh) is ready to be
    /// collected and GC is idle.
    pub(crate) fn kick_relocation(&self, plane: u32) {
        let ready = {
            let blocks = self.blocks.borrow();
            self.bad.queue.borrow()[plane as usize].iter().any(|&b| blocks.is_candidate(b))
        };
        if ready && !self.gc.active.borrow()[plane as usize] {
            self.start_gc(plane);
        }
    }

    /// The next queued block of `plane` (retiring or due for refresh) ready to be collected
    /// (all its programs done), dropping from the queue those that are no longer waiting (GC
    /// took one as an ordinary victim: its erase retires or frees it).
    pub(crate) fn next_queued(&self, plane: u32) -> Option<BlockIdx> {
        let blocks = self.blocks.borrow();
        let mut queue = self.bad.queue.borrow_mut();
        let q = &mut queue[plane as usize];
        q.retain(|&b| {
            let i = blocks.info(b);
            matches!(i.usage, BlockUse::Closed | BlockUse::Open) && (i.retiring || i.refreshing)
        });
        let i = q.iter().position(|&b| blocks.is_candidate(b))?;
        Some(q.remove(i))
    }

    /// Takes `block` (a victim whose data has moved, or whose erase failed) out of use and
    /// marks it bad in the array, then checks the spares. `erase_failed` says which.
    pub(crate) fn retire(&self, block: BlockIdx, erase_failed: bool) {
        // If the image cannot record it, the block is out of use all the same (a restart would
        // find it erased, or holding only stale data, and use it again).
        let _ = self.fil.array().borrow_mut().mark_bad(block);
        let plane = {
            let mut blocks = self.blocks.borrow_mut();
            blocks.retire(block);
            blocks.plane_of(block)
        };
        let mut st = self.stats.borrow_mut();
        st.media.grown_bad_blocks += 1;
        st.media.erase_failures += erase_failed as u64;
        let spares = self.bad.spares(&self.blocks.borrow(), plane);
        st.media.min_spare_blocks = Some(st.media.min_spare_blocks.map_or(spares, |m| m.min(spares)));
        if spares <= self.bad.end_of_life && !self.bad.read_only.get() {
            self.bad.read_only.set(true);
            st.media.read_only_at = Some(self.cx.now());
        }
    }
}
