//! The FTL's invariants, checked with nothing in flight: the map and the array agree both
//! ways, and every block is accounted for.

use firmware::ftl::BlockUse;
use nand::{BlockIdx, Lpn, UnitState};

use crate::ftl::HostFtl;

impl HostFtl {
    /// Checks that every mapped LPN names a valid unit holding it, that no other unit is
    /// valid, and that the block table matches the array; the error says what is wrong.
    pub fn check_invariants(&self) -> Result<(), String> {
        let i = &*self.inner;
        let array = i.raw.fil().array().borrow();
        let mut mapped = 0u64;
        for (lpn, &u) in i.l2p.borrow().iter().enumerate() {
            if u == crate::ftl::UNMAPPED {
                continue;
            }
            mapped += 1;
            let unit = nand::UnitAddr(u);
            match array.unit(unit) {
                UnitState::Valid(l) if l == Lpn(lpn as u32) => {}
                other => return Err(format!("LPN {lpn} maps to unit {u}, which is {other:?}")),
            }
        }
        let valid: u64 = array.blocks().iter().map(|b| b.valid_units as u64).sum();
        if valid != mapped {
            return Err(format!("{valid} valid units on flash but {mapped} mapped LPNs"));
        }
        if mapped != i.mapped.get() {
            return Err(format!("{mapped} mapped LPNs counted {}", i.mapped.get()));
        }
        let blocks = i.blocks.borrow();
        for b in 0..i.geo.total_blocks() {
            let (info, state) = (blocks.info(BlockIdx(b)), array.block(BlockIdx(b)));
            let fine = match info.usage {
                BlockUse::Free => state.write_ptr == 0,
                BlockUse::Bad => state.bad,
                BlockUse::Open | BlockUse::Closed => !state.bad,
                BlockUse::Victim => false,
            };
            if !fine || info.pins > 0 {
                return Err(format!(
                    "block {b}: {:?} with {} pins, array write pointer {}",
                    info.usage, info.pins, state.write_ptr
                ));
            }
        }
        let census = blocks.census();
        if census.iter().sum::<u64>() != i.geo.total_blocks() as u64 || census[0] != blocks.total_free() {
            return Err(format!("block census {census:?} does not add up"));
        }
        Ok(())
    }
}
