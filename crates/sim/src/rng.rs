//! The simulation's one source of randomness.
//!
//! A run owns exactly one seeded generator (xoshiro256++: fast, small state, a fixed and
//! documented algorithm, so a seed means the same thing in every build). Components that want
//! an independent stream fork one from it at construction time with [`fork`], which keeps runs
//! reproducible while letting one component's draws not shift another's.

use rand::{Rng, SeedableRng};

/// The simulation RNG type.
pub type SimRng = rand_xoshiro::Xoshiro256PlusPlus;

/// A new generator seeded from `parent`'s next output.
pub fn fork(parent: &mut SimRng) -> SimRng {
    SimRng::seed_from_u64(parent.next_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let mut a = SimRng::seed_from_u64(7);
        let mut b = SimRng::seed_from_u64(7);
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let mut c = SimRng::seed_from_u64(8);
        assert_ne!(xs[0], c.next_u64());
    }
}
