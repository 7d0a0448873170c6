//! Integration tests of the BCH codec: known generators, round trips under bit flips, the
//! metadata-only decision against the byte decoder, and the miscorrection rate beyond `t`.
//!
//! Randomised tests use proptest (which prints its failing case) or a seeded SplitMix64
//! (whose seed is a constant in the test, printed in every assertion message).

mod decide;
mod known_answers;
mod miscorrection;
mod roundtrip;

use bch::Bch;

/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny seeded generator for test patterns.
pub struct Rng(u64);

impl Rng {
    /// The generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (the modulo bias is negligible for the small `n` used here).
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next_u64() % u64::from(n)) as u32
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// `count` distinct positions among the codeword's bits.
pub fn distinct_positions(rng: &mut Rng, code: &Bch, count: u32) -> Vec<u32> {
    let n = code.codeword_bits();
    let mut picked: Vec<u32> = Vec::with_capacity(count as usize);
    while picked.len() < count as usize {
        let p = rng.below(n);
        if !picked.contains(&p) {
            picked.push(p);
        }
    }
    picked
}

/// Flips codeword bit `pos` (data bits first, then parity bits, most significant first).
pub fn flip(code: &Bch, data: &mut [u8], parity: &mut [u8], pos: u32) {
    if pos < code.data_bits() {
        data[pos as usize / 8] ^= 0x80 >> (pos % 8);
    } else {
        let p = pos - code.data_bits();
        parity[p as usize / 8] ^= 0x80 >> (p % 8);
    }
}

/// A random message with the ignored bits of its last byte cleared.
pub fn message(rng: &mut Rng, code: &Bch) -> Vec<u8> {
    let mut data = rng.bytes(code.data_bytes());
    let tail = code.data_bits() % 8;
    if tail != 0 {
        *data.last_mut().unwrap() &= 0xffu8 << (8 - tail);
    }
    data
}

/// Whether `(data, parity)` is a codeword.
pub fn is_codeword(code: &Bch, data: &[u8], parity: &[u8]) -> bool {
    let mut cost = bch::DecodeCost::default();
    code.syndromes(data, parity, &mut cost).is_none()
}
