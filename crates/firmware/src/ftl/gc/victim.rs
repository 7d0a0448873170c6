//! Victim selection: which closed block of a plane GC collects next. A policy is a type
//! implementing [`VictimPicker`]; the configuration's [`VictimPolicy`] names the built-in ones
//! ([`Greedy`], [`CostBenefit`], [`RandomVictim`], [`Fifo`]), and a library user can hand the
//! FTL another (see [`Policies`](crate::ftl::Policies)).

use std::rc::Rc;

use nand::{BlockIdx, FlashArray};
use rand::RngExt;
use sim::SimRng;

use crate::ftl::blocks::BlockManager;
use crate::ftl::config::VictimPolicy;

/// A closed block GC may collect.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The block.
    pub block: BlockIdx,
    /// Its valid units (what collecting it moves).
    pub valid: u32,
    /// When it was closed: a sequence number, larger is later.
    pub closed_seq: u64,
}

/// Chooses GC's victim among a plane's candidates.
///
/// GC calls [`pick`](Self::pick) each time it is about to collect a block of a plane (the
/// untimed ageing too), with that plane's candidates: closed blocks, in block order, each of
/// which would gain room if collected; never an empty list. The implementer returns an index
/// into the list. It must decide from its arguments alone: randomness only from `rng` (the
/// run's seeded stream), no state kept between calls that a run's inputs do not determine,
/// and no panics on any non-empty list.
pub trait VictimPicker {
    /// The index in `candidates` of the block to collect; `units_per_block` is the most a
    /// block's `valid` can be.
    fn pick(&self, candidates: &[Candidate], units_per_block: u32, rng: &mut SimRng) -> usize;

    /// Whether this policy picks a block with the fewest valid units: the untimed ageing then
    /// uses its own index of blocks by valid units instead of calling [`pick`](Self::pick).
    fn is_greedy(&self) -> bool {
        false
    }
}

/// Fewest valid units (the lowest block first among ties).
pub struct Greedy;

impl VictimPicker for Greedy {
    fn pick(&self, c: &[Candidate], _: u32, _: &mut SimRng) -> usize {
        index_of_min(c, |x| (x.valid, x.block))
    }
    fn is_greedy(&self) -> bool {
        true
    }
}

/// Highest (1 - u) / 2u x age (Kawaguchi et al.), u the block's valid share and age counted
/// in blocks closed since (the lowest block first among ties).
pub struct CostBenefit;

impl VictimPicker for CostBenefit {
    fn pick(&self, c: &[Candidate], upb: u32, _: &mut SimRng) -> usize {
        let newest = c.iter().map(|x| x.closed_seq).max().unwrap_or(0);
        let score = |x: &Candidate| {
            let u = x.valid as f64 / upb as f64;
            let age = (newest - x.closed_seq + 1) as f64;
            if u == 0.0 { f64::INFINITY } else { (1.0 - u) / (2.0 * u) * age }
        };
        let best = c
            .iter()
            .enumerate()
            .max_by(|(_, a), (_, b)| score(a).total_cmp(&score(b)).then(b.block.cmp(&a.block)));
        best.map_or(0, |(i, _)| i)
    }
}

/// A candidate chosen uniformly at random.
pub struct RandomVictim;

impl VictimPicker for RandomVictim {
    fn pick(&self, c: &[Candidate], _: u32, rng: &mut SimRng) -> usize {
        rng.random_range(0..c.len())
    }
}

/// The block that was closed longest ago (the lowest block first among ties).
pub struct Fifo;

impl VictimPicker for Fifo {
    fn pick(&self, c: &[Candidate], _: u32, _: &mut SimRng) -> usize {
        index_of_min(c, |x| (x.closed_seq, x.block))
    }
}

/// The index of the candidate with the smallest key.
fn index_of_min<K: Ord>(c: &[Candidate], key: impl Fn(&Candidate) -> K) -> usize {
    c.iter().enumerate().min_by_key(|(_, x)| key(x)).map_or(0, |(i, _)| i)
}

impl VictimPolicy {
    /// The built-in picker this names.
    pub fn picker(self) -> Rc<dyn VictimPicker> {
        match self {
            VictimPolicy::Greedy => Rc::new(Greedy),
            VictimPolicy::CostBenefit => Rc::new(CostBenefit),
            VictimPolicy::Random => Rc::new(RandomVictim),
            VictimPolicy::Fifo => Rc::new(Fifo),
        }
    }
}

/// Picks a victim in `plane` with `picker`, or `None` when no block would free any space (all
/// candidates are fully valid) — collecting then would only burn erases.
pub fn pick(
    picker: &dyn VictimPicker,
    plane: u32,
    blocks: &BlockManager,
    array: &FlashArray,
    rng: &mut SimRng,
) -> Option<BlockIdx> {
    let upb = array.geometry().units_per_block();
    pick_by(picker, plane, blocks, upb, |b| array.block(b).valid_units, rng)
}

/// [`pick`] among the blocks whose valid units, packed, fill fewer pages than a block holds:
/// moving any other victim takes a whole block of GC pages, so collecting it frees nothing
/// (511 of 512 units in two-unit pages: the odd unit is padded into a page of its own). Each
/// block's valid units come from `valid`, in what moving them costs (the timed GC counts a
/// translation page, one unit that moves into a page of its own, as a page's worth). The
/// timed GC picks this way; a collection that still gains nothing stops it.
pub fn pick_gaining(
    picker: &dyn VictimPicker,
    plane: u32,
    blocks: &BlockManager,
    geo: &nand::Geometry,
    valid: impl Fn(BlockIdx) -> u32,
    rng: &mut SimRng,
) -> Option<BlockIdx> {
    let (upb, upp) = (geo.units_per_block(), geo.units_per_page());
    let most = upb - upp; // ceil(valid / upp) < pages
    pick_within(picker, plane, blocks, upb, most, valid, rng)
}

/// [`pick`] with each block's valid units from `valid` (of `upb` units per block).
pub fn pick_by(
    picker: &dyn VictimPicker,
    plane: u32,
    blocks: &BlockManager,
    upb: u32,
    valid: impl Fn(BlockIdx) -> u32,
    rng: &mut SimRng,
) -> Option<BlockIdx> {
    pick_within(picker, plane, blocks, upb, upb - 1, valid, rng)
}

/// A victim among the candidates of `plane` with at most `most` valid units (of `upb`).
fn pick_within(
    picker: &dyn VictimPicker,
    plane: u32,
    blocks: &BlockManager,
    upb: u32,
    most: u32,
    valid: impl Fn(BlockIdx) -> u32,
    rng: &mut SimRng,
) -> Option<BlockIdx> {
    let candidates: Vec<Candidate> = blocks
        .plane_blocks(plane)
        .filter(|&b| blocks.is_candidate(b))
        .map(|b| Candidate { block: b, valid: valid(b), closed_seq: blocks.info(b).closed_seq })
        .filter(|c| c.valid <= most)
        .collect();
    if candidates.is_empty() {
        return None;
    }
    Some(candidates[picker.pick(&candidates, upb, rng)].block)
}
