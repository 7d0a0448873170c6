//! What a mapping unit holds as it moves through the cache and the flash: a data tag
//! (metadata-only mode) or its bytes (payload stores).

use std::rc::Rc;

use nand::DataTag;

/// The content of one mapping unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitData {
    /// Metadata-only mode: the tag that identifies what was written.
    Tag(DataTag),
    /// Payload mode: the unit's bytes, shared (a cache line being written back and the page
    /// assembled from it hold the same bytes; a later write to the line copies them first).
    Bytes(Rc<[u8]>),
}

impl UnitData {
    /// What an unwritten (or trimmed) unit reads as: zeroes, or tag 0.
    pub fn zero(payload: bool, unit_bytes: usize) -> UnitData {
        if payload {
            UnitData::Bytes(std::iter::repeat_n(0, unit_bytes).collect())
        } else {
            UnitData::Tag(DataTag(0))
        }
    }

    /// The unit's tag (for payload data, a fingerprint of its bytes).
    pub fn tag(&self) -> DataTag {
        match self {
            UnitData::Tag(t) => *t,
            UnitData::Bytes(b) => DataTag(fingerprint(b)),
        }
    }

    /// Overwrites sectors `[first, first + count)` (of `sector` bytes each) with `src`: bytes
    /// for payload data, or a new tag.
    pub fn merge(&mut self, first: usize, sector: usize, src: &UnitData) {
        match (self, src) {
            (UnitData::Bytes(dst), UnitData::Bytes(s)) => {
                Rc::make_mut(dst)[first * sector..first * sector + s.len()].copy_from_slice(s)
            }
            (dst, src) => *dst = UnitData::Tag(src.tag()),
        }
    }
}

/// A 16-bit fingerprint of a unit's bytes. It is computed for every unit programmed (its OOB
/// tag), so it reads 8-byte words on four independent lanes (a byte-at-a-time hash is one long
/// chain of dependent multiplies: about 4 µs per 4 KiB unit, the largest single cost of a
/// served write) and mixes the lanes with a 64-bit finalizer so that every input bit reaches
/// the 16 bits kept.
pub fn fingerprint(bytes: &[u8]) -> u16 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut lanes =
        [0x243f_6a88_85a3_08d3u64, 0x1319_8a2e_0370_7344, 0xa409_3822_299f_31d0, 0x082e_fa98_ec4e_6c89];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            *lane = (*lane ^ w).wrapping_mul(K).rotate_left(29);
        }
    }
    let mut h = bytes.len() as u64;
    for lane in lanes {
        h = (h ^ lane).wrapping_mul(K);
    }
    for &b in blocks.remainder() {
        h = (h ^ b as u64).wrapping_mul(K);
    }
    // The 64-bit finalizer of MurmurHash3 (fmix64).
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    (h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn zero_units_of_different_sizes_differ_and_are_stable() {
        assert_eq!(fingerprint(&[0; 4096]), fingerprint(&[0; 4096]));
        assert_ne!(fingerprint(&[0; 4096]), fingerprint(&[0; 4095]));
        assert_ne!(fingerprint(&[]), fingerprint(&[0]));
    }

    /// A 16-bit fingerprint collides for 1 in 65,536 pairs; a single flipped bit anywhere (in
    /// the word lanes or the tail) should almost never go unnoticed.
    #[test]
    fn single_bit_flips_change_the_fingerprint() {
        for len in [4096usize, 4100, 37, 8] {
            let base: Vec<u8> = (0..len).map(|i| (i * 131 % 251) as u8).collect();
            let f = fingerprint(&base);
            let mut same = 0;
            for bit in 0..len * 8 {
                let mut v = base.clone();
                v[bit / 8] ^= 1 << (bit % 8);
                same += usize::from(fingerprint(&v) == f);
            }
            assert!(same <= 2, "{same} of {} single-bit flips kept the fingerprint of {len} bytes", len * 8);
        }
    }

    proptest! {
        /// The 16 bits are spread evenly: fingerprints of random units fill the buckets of the
        /// top 4 bits and of the bottom 4 bits alike.
        #[test]
        fn fingerprints_spread_over_all_bits(seed in any::<u64>()) {
            let mut top = [0u32; 16];
            let mut bottom = [0u32; 16];
            let mut x = seed | 1;
            for _ in 0..1600 {
                let unit: Vec<u8> = (0..64).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }).collect();
                let f = fingerprint(&unit);
                top[(f >> 12) as usize] += 1;
                bottom[(f & 15) as usize] += 1;
            }
            // 100 expected per bucket; 40..160 is far outside chance for a good hash.
            prop_assert!(top.iter().chain(&bottom).all(|&n| (40..160).contains(&n)), "{top:?} {bottom:?}");
        }
    }
}
