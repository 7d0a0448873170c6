//! Any pattern of at most `t` bit flips, in data or parity, decodes to the original word.

use bch::{Bch, DecodeCost, Decoded};
use proptest::prelude::*;
use proptest::sample::subsequence;

use crate::{Rng, flip, message};

/// Encodes a seeded message, flips `positions`, decodes, and checks the word came back.
fn flips_are_undone(code: &Bch, seed: u64, positions: &[u32]) -> Result<(), TestCaseError> {
    let mut rng = Rng::new(seed);
    let data = message(&mut rng, code);
    let parity = code.encode(&data);
    let (mut d, mut p) = (data.clone(), parity.clone());
    for &pos in positions {
        flip(code, &mut d, &mut p, pos);
    }
    let mut cost = DecodeCost::default();
    let got = code.decode(&mut d, &mut p, &mut cost);
    let expect = if positions.is_empty() {
        Decoded::Clean
    } else {
        Decoded::Corrected { bits: positions.len() as u32 }
    };
    prop_assert_eq!(got, Ok(expect), "positions {:?}", positions);
    prop_assert!(d == data, "data restored");
    prop_assert!(p == parity, "parity restored");
    prop_assert_eq!(cost, code.decode_cost(positions.len() as u32));
    Ok(())
}

/// Up to `t` distinct positions of an `n`-bit codeword.
fn patterns(n: u32, t: u32) -> impl Strategy<Value = Vec<u32>> {
    (0..=t as usize).prop_flat_map(move |k| subsequence((0..n).collect::<Vec<u32>>(), k))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// SoftSSD's sector code: 512 B, t = 12.
    #[test]
    fn sector_512b_t12(seed in any::<u64>(), pos in patterns(4252, 12)) {
        let code = Bch::new(13, 12, 4096).unwrap();
        flips_are_undone(&code, seed, &pos)?;
    }

    /// A full-length code whose message ends mid-byte: GF(2^8), t = 4, 223 data bits.
    #[test]
    fn full_length_gf256_t4(seed in any::<u64>(), pos in patterns(255, 4)) {
        let code = Bch::new(8, 4, 223).unwrap();
        flips_are_undone(&code, seed, &pos)?;
    }

    /// Errors only in the parity, where the padding bits of the last byte must stay unread.
    #[test]
    fn parity_only_512b_t12(seed in any::<u64>(), pos in subsequence((4096..4252).collect::<Vec<u32>>(), 0..=12)) {
        let code = Bch::new(13, 12, 4096).unwrap();
        flips_are_undone(&code, seed, &pos)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A strong code: 1 KiB, t = 40, GF(2^14).
    #[test]
    fn page_1kib_t40(seed in any::<u64>(), pos in patterns(8752, 40)) {
        let code = Bch::new(14, 40, 8192).unwrap();
        flips_are_undone(&code, seed, &pos)?;
    }
}

/// `t + 1 ..= 2t` distinct positions of an `n`-bit codeword.
fn heavy_patterns(n: u32, t: u32) -> impl Strategy<Value = Vec<u32>> {
    (t as usize + 1..=2 * t as usize).prop_flat_map(move |k| subsequence((0..n).collect::<Vec<u32>>(), k))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Beyond t the decoder either reports the word uncorrectable and leaves it as received,
    /// or miscorrects it to another codeword; it never hands back the original as corrected.
    #[test]
    fn beyond_t_detected_or_miscorrected(seed in any::<u64>(), pos in heavy_patterns(255, 3)) {
        let code = Bch::new(8, 3, 231).unwrap();
        let mut rng = Rng::new(seed);
        let data = message(&mut rng, &code);
        let parity = code.encode(&data);
        let (mut d, mut p) = (data.clone(), parity.clone());
        for &q in &pos {
            flip(&code, &mut d, &mut p, q);
        }
        let (rd, rp) = (d.clone(), p.clone());
        let mut cost = DecodeCost::default();
        match code.decode(&mut d, &mut p, &mut cost) {
            Err(_) => prop_assert!(d == rd && p == rp, "left as received"),
            Ok(Decoded::Corrected { bits }) => {
                prop_assert!(bits <= 3);
                prop_assert!(d != data || p != parity, "not the original");
                prop_assert!(crate::is_codeword(&code, &d, &p), "another codeword");
            }
            Ok(Decoded::Clean) => prop_assert!(false, "{} errors made a codeword", pos.len()),
        }
    }
}

/// Every field size decodes `t` errors (small t, so that every m from 3 to 16 has a code).
#[test]
fn every_field_size() {
    let mut rng = Rng::new(0x5eed_0001);
    for m in 3..=16u32 {
        let t = if m <= 4 { 1 } else { 3 };
        let max = (1u32 << m) - 1;
        let data_bits = (max - m * t).min(4096);
        let code = Bch::new(m, t, data_bits).unwrap();
        for _ in 0..20 {
            let count = rng.below(t + 1);
            let pos = crate::distinct_positions(&mut rng, &code, count);
            flips_are_undone(&code, rng.next_u64(), &pos)
                .unwrap_or_else(|e| panic!("m = {m}, seed 0x5eed_0001: {e}"));
        }
    }
}
