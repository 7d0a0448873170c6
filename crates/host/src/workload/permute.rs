//! A keyed bijection of `[0, n)`: a four-round balanced Feistel network over the smallest
//! even-bit power of two that holds `n`, with cycle walking to stay inside `[0, n)`.
//!
//! The stream uses it twice: with a fixed key to scatter the popularity ranks of `zipf` and
//! `pareto` over the region, and with a fresh key per pass as a memory-free "random map" (every
//! block exactly once per pass, in random order). Cycle walking needs at most a few steps on
//! average because the domain is less than four times `n`.

/// A permutation of `0..n`.
#[derive(Clone, Debug)]
pub(crate) struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

/// A 64-bit mixer (splitmix64's finaliser).
pub(crate) fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Permutation {
    /// The permutation of `0..n` chosen by `key`. `n` must be at least 1.
    pub fn new(n: u64, key: u64) -> Self {
        assert!(n >= 1, "a permutation needs a non-empty domain");
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let mut k = key;
        let keys = std::array::from_fn(|_| {
            k = mix64(k);
            k
        });
        Permutation { n, half_bits, keys }
    }

    /// The size of the domain.
    pub fn len(&self) -> u64 {
        self.n
    }

    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for &key in &self.keys {
            let f = mix64(right ^ key) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }

    /// The image of `x`, which must be below `n`.
    pub fn apply(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mut v = self.round_trip(x);
        while v >= self.n {
            v = self.round_trip(v);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_a_bijection_for_many_sizes() {
        for n in [1u64, 2, 3, 4, 5, 7, 8, 9, 100, 255, 256, 257, 1000, 4097] {
            for key in [0, 1, 0xdead_beef] {
                let p = Permutation::new(n, key);
                let mut seen = vec![false; n as usize];
                for x in 0..n {
                    let y = p.apply(x);
                    assert!(y < n && !seen[y as usize], "n={n} key={key} x={x} y={y}");
                    seen[y as usize] = true;
                }
                assert_eq!(p.len(), n);
            }
        }
    }

    #[test]
    fn keys_give_different_orders_and_scatter() {
        let a = Permutation::new(1000, 1);
        let b = Permutation::new(1000, 2);
        let first_a: Vec<u64> = (0..10).map(|x| a.apply(x)).collect();
        let first_b: Vec<u64> = (0..10).map(|x| b.apply(x)).collect();
        assert_ne!(first_a, first_b);
        // The first tenth of the domain lands all over it, not in the first tenth.
        let low = (0..100).filter(|&x| a.apply(x) < 100).count();
        assert!(low < 30, "{low} of the first 100 stayed in the first 100");
    }

    #[test]
    fn handles_the_largest_domains() {
        let p = Permutation::new(u64::MAX, 7);
        assert!(p.apply(u64::MAX - 1) < u64::MAX);
        assert!(p.apply(0) < u64::MAX);
    }
}
