//! Mounting the FTL over an array that already holds data.
//!
//! * **Clean** (a snapshot, or a clean-shutdown checkpoint): the array state is exact — every
//!   valid unit is the current copy — and the block hints (which stream filled each block, the
//!   order blocks closed in) were saved beside it. The maps are rebuilt from the valid units and
//!   must agree with the translation pages on flash.
//! * **Recover** (after a crash): the array was rebuilt from the OOB, the newest copy of each
//!   LPN winning ([`FlashArray::restore`](nand::FlashArray::restore)). Streams are inferred from
//!   the contents, and every translation page is rewritten from the rebuilt map, because the ones
//!   on flash may predate the last writes.
//!
//! Either way the FTL starts with an empty data cache, a cold mapping cache and zero counters.

use std::collections::VecDeque;

use nand::{BlockIdx, Lpn, UnitAddr};

use crate::fil::Fil;
use crate::ftl::blocks::{BlockManager, BlockUse, Stream};
use crate::ftl::config::{FtlConfig, TRANSLATION_LPN_BASE};
use crate::ftl::map::L2p;
use crate::ftl::precondition::PreconditionError;
use crate::ftl::state::{Ftl, Setup};

/// What the FTL knows about a block beyond the array state: saved by snapshots and
/// checkpoints so that a mounted device picks up where it stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BlockHint {
    /// The stream that filled (or is filling) the block.
    pub stream: Stream,
    /// When the block closed (orders FIFO and cost-benefit victims); 0 if it is not closed.
    pub closed_seq: u64,
}

/// How to mount.
#[derive(Copy, Clone, Debug)]
pub enum Mount<'a> {
    /// Exact array state, with one hint per block.
    Clean(&'a [BlockHint]),
    /// After a crash: infer what is missing and repair the translation pages.
    Recover,
}

/// What mounting found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MountReport {
    /// Logical units with data.
    pub mapped_units: u64,
    /// Partly written blocks that became write frontiers again.
    pub frontiers: u32,
    /// Partly written blocks closed instead (their stream's frontier in that plane was taken).
    pub closed_partial: u32,
    /// Translation pages rewritten to repair them (recovery only).
    pub translation_pages_rewritten: u32,
}

impl Ftl {
    /// An FTL over the FIL's array, which already holds data (see the module docs). The
    /// configuration must be the one the data was written under (same geometry, capacity and
    /// mapping); the error says what does not fit.
    pub fn mount(with: Setup, cfg: &FtlConfig, how: Mount<'_>) -> Result<(Ftl, MountReport), MountError> {
        let geo = with.fil.geometry().clone();
        let rng = with.cx.fork_rng();
        let inferred;
        let hints = match how {
            Mount::Clean(h) if h.len() == geo.total_blocks() as usize => h,
            Mount::Clean(h) => {
                return Err(MountError::Hints { hints: h.len(), blocks: geo.total_blocks() });
            }
            Mount::Recover => {
                inferred = infer_hints(&with.fil);
                &inferred[..]
            }
        };
        let blocks = {
            let array = with.fil.array().borrow();
            BlockManager::restore(
                &geo,
                cfg.wl.dynamic,
                array.blocks().iter().map(|b| (b.write_ptr, b.erase_count, b.bad)),
                |b| (hints[b.idx()].stream, hints[b.idx()].closed_seq),
            )
        };
        let ftl = Ftl::assemble(with, cfg, blocks, rng);
        let mut report = MountReport::default();
        let i = &*ftl.inner;
        // Frontiers.
        {
            let array = i.fil.array().borrow();
            let mut blocks = i.blocks.borrow_mut();
            let mut alloc = i.alloc.borrow_mut();
            for b in 0..geo.total_blocks() {
                let block = BlockIdx(b);
                if blocks.info(block).usage != BlockUse::Open {
                    continue;
                }
                // After a crash a partly written data block may have been GC's (a recovered
                // array cannot tell), and a plane left with no free block and no GC frontier
                // could never collect again: the first one in a plane becomes GC's frontier,
                // the next the user stream's. After a clean stop the hints say whose it was.
                let hinted = hints[b as usize].stream;
                let order = match how {
                    Mount::Recover if hinted == Stream::User => [Stream::Gc, Stream::User],
                    _ => [hinted, Stream::Gc],
                };
                let next = array.block(block).write_ptr;
                if order.iter().any(|&s| alloc.adopt(s, block, next, &blocks)) {
                    report.frontiers += 1;
                } else {
                    blocks.close(block);
                    report.closed_partial += 1;
                }
            }
        }
        // Maps.
        {
            let array = i.fil.array().borrow();
            let mut l2p = i.map.l2p.borrow_mut();
            let mut dftl = i.map.dftl.as_ref().map(|d| d.borrow_mut());
            // The units are scanned in order, their LPNs land at random in the table: each
            // unit's state is read a few dozen units ahead of its turn, into a window, and its
            // entry asked for then (a cache miss each on a full-size device).
            const AHEAD: usize = 32;
            let prefetch = |l2p: &L2p, s: &nand::UnitState| {
                if let nand::UnitState::Valid(lpn) = s {
                    l2p.prefetch(*lpn);
                }
            };
            let mut states = (0..geo.total_units()).map(|u| array.unit(UnitAddr(u)));
            let mut window: VecDeque<nand::UnitState> = states.by_ref().take(AHEAD).collect();
            window.iter().for_each(|s| prefetch(&l2p, s));
            for u in 0..geo.total_units() {
                if let Some(s) = states.next() {
                    prefetch(&l2p, &s);
                    window.push_back(s);
                }
                let unit = UnitAddr(u);
                let state = window.pop_front().expect("the window holds each unit's state in turn");
                let nand::UnitState::Valid(lpn) = state else { continue };
                if lpn.0 >= TRANSLATION_LPN_BASE {
                    let t = lpn.0 - TRANSLATION_LPN_BASE;
                    let Some(d) = dftl.as_mut().filter(|d| t < d.tpages()) else {
                        return Err(MountError::NoSuchTranslationPage { unit: u, tpage: t });
                    };
                    if let Some(other) = d.relocate(t, unit) {
                        return Err(MountError::TranslationPageTwice { tpage: t, units: [other.0, u] });
                    }
                } else if lpn.0 >= i.logical {
                    return Err(MountError::BeyondCapacity { unit: u, lpn, logical: i.logical });
                } else if let Some(other) = l2p.set(lpn, Some(unit)) {
                    return Err(MountError::LpnTwice { lpn, units: [other.0, u] });
                } else {
                    report.mapped_units += 1;
                }
            }
        }
        match how {
            Mount::Clean(_) => ftl.adopt_translation_pages()?,
            Mount::Recover => {
                report.translation_pages_rewritten =
                    i.write_all_translation_pages().map_err(MountError::Rewrite)?
            }
        }
        Ok((ftl, report))
    }

    /// The hints a snapshot or checkpoint saves beside the array state.
    pub fn block_hints(&self) -> Vec<BlockHint> {
        let blocks = self.inner.blocks.borrow();
        (0..self.inner.geo.total_blocks())
            .map(|b| {
                let info = blocks.info(BlockIdx(b));
                let closed = matches!(info.usage, BlockUse::Closed | BlockUse::Victim);
                BlockHint { stream: info.stream, closed_seq: if closed { info.closed_seq } else { 0 } }
            })
            .collect()
    }

    /// After a clean mount: the translation pages on flash hold the map (they were written last
    /// before the state was saved); every mapped LPN's page must be on flash.
    fn adopt_translation_pages(&self) -> Result<(), MountError> {
        let i = &*self.inner;
        let Some(d) = &i.map.dftl else { return Ok(()) };
        let mut d = d.borrow_mut();
        let per = d.entries_per_tpage;
        let l2p = i.map.l2p.borrow();
        for t in 0..d.tpages() {
            let range = (t * per) as usize..((t + 1) * per).min(i.logical) as usize;
            let mapped = range.clone().any(|l| l2p.get(Lpn(l as u32)).is_some());
            if mapped && d.location(t).is_none() {
                return Err(MountError::MissingTranslationPage { lpns: range, tpage: t });
            }
            if let Some(on_flash) = d.on_flash.as_mut() {
                on_flash[range.clone()].copy_from_slice(l2p.raw(range));
            }
        }
        Ok(())
    }
}

/// Why an array's data could not be mounted under a configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MountError {
    /// A clean mount's block hints do not cover the array.
    #[error("{hints} block hints for {blocks} blocks")]
    Hints {
        /// Hints given.
        hints: usize,
        /// Blocks in the array.
        blocks: u32,
    },
    /// A unit holds a translation page this mapping configuration does not have.
    #[error("unit {unit} holds translation page {tpage}, which this mapping configuration does not have")]
    NoSuchTranslationPage {
        /// The unit.
        unit: u32,
        /// The translation page.
        tpage: u32,
    },
    /// Two valid copies of one translation page.
    #[error("translation page {tpage} is valid in units {} and {}", units[0], units[1])]
    TranslationPageTwice {
        /// The translation page.
        tpage: u32,
        /// Its two copies.
        units: [u32; 2],
    },
    /// A unit holds an LPN beyond the configuration's capacity.
    #[error("unit {unit} holds LPN {}, beyond this configuration's {logical} logical units", lpn.0)]
    BeyondCapacity {
        /// The unit.
        unit: u32,
        /// The LPN.
        lpn: Lpn,
        /// Logical units configured.
        logical: u32,
    },
    /// Two valid copies of one LPN.
    #[error("LPN {} is valid in units {} and {}", lpn.0, units[0], units[1])]
    LpnTwice {
        /// The LPN.
        lpn: Lpn,
        /// Its two copies.
        units: [u32; 2],
    },
    /// After a clean stop, mapped LPNs whose translation page is not on flash.
    #[error("LPNs {lpns:?} have data but their translation page {tpage} is not on flash")]
    MissingTranslationPage {
        /// The LPNs.
        lpns: std::ops::Range<usize>,
        /// Their translation page.
        tpage: u32,
    },
    /// The saved array state does not make an array (a snapshot's, say).
    #[error("{0}")]
    ArrayState(String),
    /// Rewriting the translation pages after recovery failed.
    #[error("rewriting the translation pages: {0}")]
    Rewrite(#[source] PreconditionError),
}

/// Hints for a recovered array: translation pages fill mapping blocks; everything else is
/// taken for user data; full blocks close in block order.
fn infer_hints(fil: &Fil) -> Vec<BlockHint> {
    let array = fil.array().borrow();
    let geo = array.geometry();
    array
        .blocks()
        .iter()
        .enumerate()
        .map(|(b, st)| {
            let first = geo.unit_addr(geo.page_of(BlockIdx(b as u32), 0), 0).0;
            let used = st.write_ptr * geo.units_per_page();
            let mapping = (first..first + used).any(|u| match array.unit(UnitAddr(u)) {
                nand::UnitState::Valid(l) | nand::UnitState::Invalid(Some(l)) => l.0 >= TRANSLATION_LPN_BASE,
                _ => false,
            });
            BlockHint {
                stream: if mapping { Stream::Mapping } else { Stream::User },
                closed_seq: if st.write_ptr == geo.pages { b as u64 + 1 } else { 0 },
            }
        })
        .collect()
}
