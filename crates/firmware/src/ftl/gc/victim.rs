//! Victim selection: which closed block of a plane GC collects next.

use nand::{BlockIdx, FlashArray};
use rand::RngExt;
use sim::SimRng;

use crate::ftl::blocks::BlockManager;
use crate::ftl::config::VictimPolicy;

/// Picks a victim in `plane` under `policy`, or `None` when no block would free any space (all
/// candidates are fully valid) — collecting then would only burn erases.
pub fn pick(
    policy: VictimPolicy,
    plane: u32,
    blocks: &BlockManager,
    array: &FlashArray,
    rng: &mut SimRng,
) -> Option<BlockIdx> {
    let upb = array.geometry().units_per_block();
    pick_by(policy, plane, blocks, upb, |b| array.block(b).valid_units, rng)
}

/// [`pick`] with each block's valid units from `valid` (of `upb` units per block).
pub fn pick_by(
    policy: VictimPolicy,
    plane: u32,
    blocks: &BlockManager,
    upb: u32,
    valid: impl Fn(BlockIdx) -> u32,
    rng: &mut SimRng,
) -> Option<BlockIdx> {
    let gain: Vec<(BlockIdx, u32)> = blocks
        .plane_blocks(plane)
        .filter(|&b| blocks.is_candidate(b))
        .map(|b| (b, valid(b)))
        .filter(|&(_, valid)| valid < upb)
        .collect();
    if gain.is_empty() {
        return None;
    }
    let newest = gain.iter().map(|&(b, _)| blocks.info(b).closed_seq).max().unwrap_or(0);
    let pick = match policy {
        VictimPolicy::Greedy => gain.iter().min_by_key(|&&(b, v)| (v, b)),
        VictimPolicy::Fifo => gain.iter().min_by_key(|&&(b, _)| (blocks.info(b).closed_seq, b)),
        VictimPolicy::Random => Some(&gain[rng.random_range(0..gain.len())]),
        VictimPolicy::CostBenefit => gain.iter().max_by(|&&(a, va), &&(b, vb)| {
            let score = |blk: BlockIdx, v: u32| {
                let u = v as f64 / upb as f64;
                let age = (newest - blocks.info(blk).closed_seq + 1) as f64;
                if u == 0.0 { f64::INFINITY } else { (1.0 - u) / (2.0 * u) * age }
            };
            score(a, va).total_cmp(&score(b, vb)).then(b.cmp(&a))
        }),
    };
    pick.map(|&(b, _)| b)
}

/// The closed block of `plane` with the lowest erase count (static wear levelling's cold
/// victim), if the plane's erase-count spread exceeds `threshold`.
pub fn cold(plane: u32, threshold: u32, blocks: &BlockManager, array: &FlashArray) -> Option<BlockIdx> {
    let counts =
        || blocks.plane_blocks(plane).filter(|&b| !array.block(b).bad).map(|b| array.block(b).erase_count);
    let (min, max) = (counts().min()?, counts().max()?);
    if max - min <= threshold {
        return None;
    }
    blocks
        .plane_blocks(plane)
        .filter(|&b| blocks.is_candidate(b) && array.block(b).erase_count == min)
        .min_by_key(|&b| (blocks.info(b).closed_seq, b))
}
