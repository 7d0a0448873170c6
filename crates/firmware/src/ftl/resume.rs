//! The FTL's state in DRAM that a snapshot keeps beside the array and the block hints.
//!
//! A clean mount rebuilds the maps from the array and the block roles from the hints, but
//! would start everything else empty or from zero: the data cache, the firmware's random
//! stream, the placement policy's cursor, the translation pages' turn, the order of the free
//! pools and the close counter. A device in GC steady state has a full data cache (see
//! `precondition`), so a snapshot that dropped it would start a different device: its first
//! writes would find free lines where the saved device had to write lines back first.
//! [`DramState`] is what is needed to start the device that was saved.
//!
//! Only lines that hold what flash holds are kept (clean lines, and dirty lines whose data is
//! the flash copy, as ageing leaves them); their data is read back from the array on load.

use nand::{DataTag, Lpn};
use sim::SimRng;

use crate::ftl::blocks::PoolState;
use crate::ftl::cache::LineState;
use crate::ftl::data::UnitData;
use crate::ftl::state::Ftl;

/// What a snapshot keeps of the FTL's DRAM ([`Ftl::dram_state`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DramState {
    /// The data cache: every clean line, then every dirty line, each list least recently used
    /// first (the order that rebuilds both lists), with whether the line is dirty.
    pub lines: Vec<(Lpn, bool)>,
    /// The firmware's random stream.
    pub rng: SimRng,
    /// The placement policy's cursor and the translation pages' turn.
    pub alloc: [u64; 2],
    /// The free pools' order and the block counters.
    pub pools: PoolState,
}

impl Ftl {
    /// The FTL's DRAM state as a snapshot keeps it, over a metadata-only store holding `tags`
    /// (one per unit). A dirty line whose data is not what flash holds is refused, as is every
    /// line being filled or written back: `Err` counts them.
    pub fn dram_state(&self, tags: &[u16]) -> Result<DramState, u64> {
        let i = &*self.inner;
        let on_flash = |lpn| self.on_flash(lpn, tags);
        let cache = i.cache.borrow();
        let mut lines = Vec::with_capacity(cache.len() as usize);
        let mut newer = 0u64;
        for l in cache.lines_lru_first() {
            if l.state == LineState::Dirty && l.data != on_flash(l.lpn) {
                newer += 1;
            } else {
                lines.push((l.lpn, l.state == LineState::Dirty));
            }
        }
        let in_transition = cache.len() as u64 - lines.len() as u64 - newer;
        if newer + in_transition > 0 {
            return Err(newer + in_transition);
        }
        Ok(DramState {
            lines,
            rng: i.rng.borrow().clone(),
            alloc: i.alloc.borrow().counters(),
            pools: i.blocks.borrow().pool_state(),
        })
    }

    /// Restores a [`dram_state`](Self::dram_state) on an FTL just mounted clean from the same
    /// array state, over a metadata-only store holding `tags`. `rng`: whether the firmware's random
    /// stream continues from the saved one (otherwise it stays the one this run's seed gave).
    /// If this cache is smaller than the saved one, its least recently used lines stay out
    /// (they hold what flash holds: nothing is lost). Fails, changing nothing, if a free
    /// block of the state is not free here.
    pub fn restore_dram_state(&self, s: &DramState, rng: bool, tags: &[u16]) -> Result<(), nand::BlockIdx> {
        let i = &*self.inner;
        i.blocks.borrow_mut().set_pool_state(&s.pools)?;
        i.alloc.borrow_mut().set_counters(s.alloc);
        if rng {
            *i.rng.borrow_mut() = s.rng.clone();
        }
        let mut cache = i.cache.borrow_mut();
        let room = cache.capacity() as usize;
        let (clean, dirty): (Vec<(Lpn, bool)>, Vec<(Lpn, bool)>) = s.lines.iter().partition(|(_, d)| !d);
        // The most recently used lines of each list, dirty ones first, each list in its order.
        let dirty = &dirty[dirty.len().saturating_sub(room)..];
        let clean = &clean[clean.len().saturating_sub(room - dirty.len())..];
        for &(lpn, d) in clean.iter().chain(dirty) {
            if cache.lookup(lpn).is_none() {
                let state = if d { LineState::Dirty } else { LineState::Clean };
                let Some(p) = cache.any_free() else { break };
                cache.insert(p, lpn, state, self.on_flash(lpn, tags));
            }
        }
        Ok(())
    }

    /// What a read of `lpn` returns from a metadata-only store holding `tags`: the tag of the
    /// unit the map points at, or an unwritten unit's.
    fn on_flash(&self, lpn: Lpn, tags: &[u16]) -> UnitData {
        let i = &*self.inner;
        match i.map.get(lpn) {
            Some(u) => UnitData::Tag(DataTag(tags[u.0 as usize])),
            None => UnitData::zero(false, i.unit_bytes),
        }
    }
}
