//! Preconditioning: ageing a fresh device quickly, without simulating time.
//!
//! ```text
//!   seq-fill, random-fill ──▶ untimed unit writes ─────────────────────────┐
//!                              (the FTL's allocation, frontiers, GC)        ├─▶ translation pages
//!   steady-state:N ─────────▶ block-level ageing ──▶ layout of the units ──┘     written, counters
//!                              (valid counts only)    (LPNs placed, array)       reset
//! ```
//!
//! Fills write every logical unit once through the untimed FTL primitives ([`untimed`]): the
//! same allocation policy, write frontiers, GC thresholds, victim policy and wear-aware free
//! lists as the timed FTL, but programming and erasing the array directly.
//!
//! A steady state is a random fill plus `N` times the logical capacity of uniform random
//! overwrites. At 7% over-provisioning GC moves 5 to 25 units per host write, so replaying
//! billions of unit moves one by one takes minutes at full size. The block-level ager
//! ([`ager`]) replays the same process on what it depends on, each block's count of valid
//! units: under uniform random overwrites the unit a write replaces lies in a block chosen with
//! probability proportional to its valid count, and GC moves a victim's valid units in bulk.
//! Which slots of a block stay valid, and which LPN each holds, are exchangeable under uniform
//! random writes, so [`layout`] draws them at random once at the end. The result is a device
//! with the distribution of state the unit-level replay gives (checked against full simulation
//! in the `precondition` integration tests), built in seconds.
//!
//! A steady state also leaves the data cache as continuous writing does: full of dirty lines,
//! the last writes, whose older copies are still the valid ones on flash. The next write then
//! costs a write-back, as it would on a device that has been written all along.
//!
//! Every path ends with every translation page written (the CMT empty and clean) and the FTL's
//! counters reset, so a run measures only itself.

mod ager;
mod layout;
pub(crate) mod untimed;

use std::io;
use std::str::FromStr;

use nand::Lpn;
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::ftl::state::Ftl;
use crate::ftl::stats::FtlStats;

/// How to age a device before a run.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Precondition {
    /// Every logical unit written once, in LBA order.
    SeqFill,
    /// Every logical unit written once, in a random order.
    RandomFill,
    /// A random fill, then uniform random 4 KiB overwrites of `overwrites` times the logical
    /// capacity, with GC running as it would: the device in GC steady state.
    SteadyState {
        /// Overwrites, in multiples of the logical capacity. Default: 2.
        overwrites: f64,
    },
}

impl FromStr for Precondition {
    type Err = String;

    /// `seq-fill`, `random-fill`, `steady-state` or `steady-state:N` (N overwrites).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "seq-fill" => Ok(Precondition::SeqFill),
            None if s == "random-fill" => Ok(Precondition::RandomFill),
            None if s == "steady-state" => Ok(Precondition::SteadyState { overwrites: 2.0 }),
            Some(("steady-state", n)) => match n.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => {
                    Ok(Precondition::SteadyState { overwrites: v })
                }
                _ => Err(format!("steady-state:N needs N between 0 and 100 overwrites (got {n:?})")),
            },
            _ => {
                Err(format!("unknown precondition {s:?}: expected seq-fill, random-fill or steady-state[:N]"))
            }
        }
    }
}

/// Why a device could not be preconditioned.
#[derive(Debug, thiserror::Error)]
pub enum PreconditionError {
    /// The device has served I/O already: only fresh devices are preconditioned.
    #[error("preconditioning needs a fresh device, but this one has been written")]
    NotFresh,
    /// GC found no free page anywhere (the over-provisioning is too small for the thresholds).
    #[error("the device is too full to age: {0}; raise ftl.op or lower gc.soft_free")]
    TooFull(String),
    /// The namespace is zoned: its zones are the host's to write, in order.
    #[error(
        "a zoned namespace cannot be aged by the preconditioner (its zones are written by the host, in order); use --precondition none and a workload that fills zones"
    )]
    Zoned,
    /// Steady-state ageing places its data as GC leaves it, not in the NVM sets confined
    /// flows' ranges were registered in.
    #[error(
        "steady-state preconditioning cannot place confined flows' data in their planes; use seq-fill or random-fill"
    )]
    Confined,
    /// The page store failed.
    #[error("the page store failed while ageing the device: {0}")]
    Store(#[from] io::Error),
}

impl Ftl {
    /// Ages this (fresh) device as `kind` says, without simulating time. `progress(done, total)`
    /// reports host units written (fill and overwrites).
    pub fn precondition(
        &self,
        kind: Precondition,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), PreconditionError> {
        let i = &*self.inner;
        if i.zoned.is_some() {
            return Err(PreconditionError::Zoned);
        }
        if i.stats.borrow().host_units_written != 0 || self.fil().array().borrow().next_seq() != 1 {
            return Err(PreconditionError::NotFresh);
        }
        let logical = i.logical as u64;
        match kind {
            Precondition::SeqFill | Precondition::RandomFill => {
                let order = Order::new(logical, kind == Precondition::SeqFill, &mut i.rng.borrow_mut());
                let mut writer = untimed::Writer::new(i);
                for k in 0..logical {
                    writer.push(Lpn(order.at(k) as u32))?;
                    if k % PROGRESS_EVERY == 0 {
                        progress(k, logical);
                    }
                }
                writer.flush()?;
                progress(logical, logical);
            }
            Precondition::SteadyState { .. } if i.sets.borrow().has_fill() => {
                return Err(PreconditionError::Confined);
            }
            Precondition::SteadyState { overwrites } => {
                let overwrites = (overwrites * logical as f64) as u64;
                let aged = ager::Ager::new(i).age(logical, overwrites, progress)?;
                layout::place(i, &aged)?;
                layout::fill_cache(i);
            }
        }
        i.write_all_translation_pages()?;
        *i.stats.borrow_mut() = FtlStats::for_config(&i.cfg);
        Ok(())
    }
}

/// Units between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 20;

/// A permutation of `0..n`: the identity, or `(a * k + b) mod n` with `a` coprime to `n`
/// (a cheap random order that needs no table).
pub(crate) struct Order {
    n: u64,
    a: u64,
    b: u64,
}

impl Order {
    pub(crate) fn new(n: u64, sequential: bool, rng: &mut sim::SimRng) -> Self {
        if sequential || n < 2 {
            return Order { n, a: 1, b: 0 };
        }
        let mut a = rng.random_range(n / 3..n) | 1;
        while gcd(a, n) != 1 {
            a += 2;
        }
        Order { n, a, b: rng.random_range(0..n) }
    }

    pub(crate) fn at(&self, k: u64) -> u64 {
        ((self.a as u128 * k as u128 + self.b as u128) % self.n as u128) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn random_order_is_a_permutation() {
        let mut rng = sim::SimRng::seed_from_u64(3);
        for n in [1u64, 2, 10, 97, 1000, 4096] {
            let o = Order::new(n, false, &mut rng);
            let mut seen = vec![false; n as usize];
            for k in 0..n {
                let v = o.at(k) as usize;
                assert!(!seen[v], "n={n}: {v} twice");
                seen[v] = true;
            }
        }
    }

    #[test]
    fn parses_kinds() {
        assert_eq!("seq-fill".parse(), Ok(Precondition::SeqFill));
        assert_eq!("steady-state:3.5".parse(), Ok(Precondition::SteadyState { overwrites: 3.5 }));
        assert!("steady-state:-1".parse::<Precondition>().is_err());
        assert!("aged".parse::<Precondition>().is_err());
    }
}
