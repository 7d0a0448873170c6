//! Placing the units of an aged device: the ager says how many units each block holds and how
//! many are still valid; here each block's valid slots are drawn uniformly among its data
//! slots (selection sampling), the logical units are dealt to them in a random order, and the
//! pages are programmed into the array in the order their blocks were filled.
//!
//! Stale slots are written as padding (no LPN): nothing reads a stale unit's name, and a NAND
//! image reopened later then finds exactly one copy of each LPN.

use nand::{BlockIdx, Lpn, Oob, OobSlot};
use rand::RngExt;

use crate::ftl::blocks::BlockUse;
use crate::ftl::cache::LineState;
use crate::ftl::data::UnitData;
use crate::ftl::precondition::ager::Aged;
use crate::ftl::precondition::{Order, PreconditionError};
use crate::ftl::state::FtlInner;

/// Writes `aged` into `ftl`'s (fresh) array and map.
pub(super) fn place(ftl: &FtlInner, aged: &Aged) -> Result<(), PreconditionError> {
    let geo = &ftl.geo;
    let upp = geo.units_per_page();
    let mut rng = ftl.rng.borrow_mut();
    let order = Order::new(ftl.logical as u64, false, &mut rng);
    let mut filled: Vec<(u64, u32)> = {
        let blocks = ftl.blocks.borrow();
        (0..geo.total_blocks())
            .filter(|&b| aged.pages[b as usize] > 0)
            .map(|b| {
                let info = blocks.info(BlockIdx(b));
                let closed = if info.usage == BlockUse::Closed { info.closed_seq } else { u64::MAX };
                (closed, b)
            })
            .collect()
    };
    filled.sort_unstable();
    let mut array = ftl.fil.array().borrow_mut();
    for (b, &erases) in aged.erases.iter().enumerate() {
        if erases > 0 {
            array.set_erase_count(BlockIdx(b as u32), erases)?;
        }
    }
    let mut l2p = ftl.map.l2p.borrow_mut();
    let zeroes = ftl.payload.then(|| vec![0u8; geo.page_bytes() as usize]);
    let tag = UnitData::zero(ftl.payload, ftl.unit_bytes).tag();
    let mut dealt = 0u64;
    for (_, b) in filled {
        let (slots, mut need) = (aged.units[b as usize], aged.valid[b as usize]);
        for p in 0..aged.pages[b as usize] {
            let page = geo.page_of(BlockIdx(b), p);
            let mut oob = Oob::empty(upp);
            for s in 0..upp {
                let slot = p * upp + s;
                if slot < slots && need > 0 && rng.random_range(0..slots - slot) < need {
                    let lpn = Lpn(order.at(dealt) as u32);
                    oob.set(s as usize, OobSlot { lpn: Some(lpn), tag });
                    l2p.set(lpn, Some(geo.unit_addr(page, s)));
                    dealt += 1;
                    need -= 1;
                }
            }
            array.program(page, &oob, zeroes.as_deref())?;
        }
        debug_assert_eq!(need, 0, "block {b}: valid units left unplaced");
    }
    assert_eq!(dealt, ftl.logical as u64, "every logical unit is valid once after ageing");
    Ok(())
}

/// Fills the data cache with dirty lines of distinct random units holding what flash holds
/// (the last writes of a long run, not yet written back).
pub(super) fn fill_cache(ftl: &FtlInner) {
    let mut cache = ftl.cache.borrow_mut();
    let mut rng = ftl.rng.borrow_mut();
    let data = UnitData::zero(ftl.payload, ftl.unit_bytes);
    let lines = (cache.capacity() as u64).min(ftl.logical as u64 / 2);
    while (cache.len() as u64) < lines {
        let lpn = Lpn(rng.random_range(0..ftl.logical));
        if cache.lookup(lpn).is_none() {
            let Some(p) = cache.any_free() else { break };
            cache.insert(p, lpn, LineState::Dirty, data.clone());
        }
    }
}
