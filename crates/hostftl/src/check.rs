//! The FTL's invariants, checked with nothing in flight: the map and the array agree both
//! ways, and every block is accounted for.

use firmware::ftl::BlockUse;
use nand::{BlockIdx, Lpn, UnitState};

use crate::ftl::HostFtl;

impl HostFtl {
    /// Checks that every mapped LPN names a valid unit holding it, that no other unit is
    /// valid, and that the block table matches the array; the error says what is wrong.
    pub fn check_invariants(&self) -> Result<(), Violation> {
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
                other => return Err(Violation::Map { lpn: lpn as u32, unit: u, state: other }),
            }
        }
        let valid: u64 = array.blocks().iter().map(|b| b.valid_units as u64).sum();
        if valid != mapped {
            return Err(Violation::ValidUnits { valid, mapped });
        }
        if mapped != i.mapped.get() {
            return Err(Violation::MappedCount { mapped, counted: i.mapped.get() });
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
                return Err(Violation::Block {
                    block: b,
                    usage: info.usage,
                    pins: info.pins,
                    write_ptr: state.write_ptr,
                });
            }
        }
        let census = blocks.census();
        if census.iter().sum::<u64>() != i.geo.total_blocks() as u64 || census[0] != blocks.total_free() {
            return Err(Violation::Census(census));
        }
        Ok(())
    }
}

/// The first invariant a check found broken (a bug: the description is for whoever debugs it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// A mapped LPN whose unit does not hold it.
    #[error("LPN {lpn} maps to unit {unit}, which is {state:?}")]
    Map {
        /// The LPN.
        lpn: u32,
        /// Where the map points.
        unit: u32,
        /// What that unit holds.
        state: UnitState,
    },
    /// Valid units on flash and mapped LPNs differ.
    #[error("{valid} valid units on flash but {mapped} mapped LPNs")]
    ValidUnits {
        /// Valid units on flash.
        valid: u64,
        /// Mapped LPNs.
        mapped: u64,
    },
    /// The mapped-LPN counter is wrong.
    #[error("{mapped} mapped LPNs counted {counted}")]
    MappedCount {
        /// Mapped LPNs found.
        mapped: u64,
        /// The counter.
        counted: u64,
    },
    /// A block's use does not match the array.
    #[error("block {block}: {usage:?} with {pins} pins, array write pointer {write_ptr}")]
    Block {
        /// The block.
        block: u32,
        /// Its use.
        usage: BlockUse,
        /// Reads pinning it.
        pins: u32,
        /// The array's write pointer.
        write_ptr: u32,
    },
    /// The blocks by use do not add up.
    #[error("block census {0:?} does not add up")]
    Census([u64; 5]),
}
