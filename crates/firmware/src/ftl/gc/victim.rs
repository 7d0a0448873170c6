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

/// [`pick`] among the blocks whose valid units, packed, fill fewer pages than a block holds:
/// moving any other victim takes a whole block of GC pages, so collecting it frees nothing
/// (511 of 512 units in two-unit pages: the odd unit is padded into a page of its own). The
/// timed GC picks this way; a collection that still gains nothing (translation pages, which
/// move a page each) stops it.
pub fn pick_gaining(
    policy: VictimPolicy,
    plane: u32,
    blocks: &BlockManager,
    array: &FlashArray,
    rng: &mut SimRng,
) -> Option<BlockIdx> {
    let geo = array.geometry();
    let (upb, upp) = (geo.units_per_block(), geo.units_per_page());
    let most = upb - upp; // ceil(valid / upp) < pages
    pick_within(policy, plane, blocks, upb, most, |b| array.block(b).valid_units, rng)
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
    pick_within(policy, plane, blocks, upb, upb - 1, valid, rng)
}

/// A victim among the candidates of `plane` with at most `most` valid units (of `upb`).
fn pick_within(
    policy: VictimPolicy,
    plane: u32,
    blocks: &BlockManager,
    upb: u32,
    most: u32,
    valid: impl Fn(BlockIdx) -> u32,
    rng: &mut SimRng,
) -> Option<BlockIdx> {
    let gain: Vec<(BlockIdx, u32)> = blocks
        .plane_blocks(plane)
        .filter(|&b| blocks.is_candidate(b))
        .map(|b| (b, valid(b)))
        .filter(|&(_, valid)| valid <= most)
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
