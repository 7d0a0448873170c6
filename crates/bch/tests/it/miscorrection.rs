//! The miscorrection rate beyond `t`, measured on seeded samples and compared with the
//! estimate `sum_{i<=t} C(n,i) / 2^r` of `Bch::miscorrection_probability` (about `1/t!` for a
//! full-length code).
//!
//! Each rate is a binomial proportion over `SAMPLES` words; the assertion allows five standard
//! deviations plus 10% of the estimate (the estimate treats the syndrome of a heavy error
//! pattern as uniform, which is an approximation for `t + 1` errors). The samples are seeded,
//! so the test is deterministic; the tolerance only keeps it honest against the theory.

use bch::{Bch, DecodeCost, Decoded};

use crate::{Rng, distinct_positions, flip, message};

const SAMPLES: u32 = 6000;

/// The fraction of `SAMPLES` words with `errors` errors that come back `Corrected`.
fn measured_rate(code: &Bch, errors: u32, seed: u64) -> f64 {
    let mut rng = Rng::new(seed);
    let mut miscorrected = 0u32;
    for _ in 0..SAMPLES {
        let mut d = message(&mut rng, code);
        let mut p = code.encode(&d);
        for pos in distinct_positions(&mut rng, code, errors) {
            flip(code, &mut d, &mut p, pos);
        }
        let mut cost = DecodeCost::default();
        match code.decode(&mut d, &mut p, &mut cost) {
            Ok(Decoded::Corrected { .. }) => miscorrected += 1,
            Ok(Decoded::Clean) => panic!("{errors} errors made a codeword"),
            Err(_) => {}
        }
    }
    f64::from(miscorrected) / f64::from(SAMPLES)
}

#[test]
fn full_length_codes_miscorrect_at_about_one_over_t_factorial() {
    const SEED: u64 = 0x0315_c0de;
    for t in [2u32, 3, 4] {
        let code = Bch::new(8, t, 255 - 8 * t).unwrap();
        let theory = code.miscorrection_probability(t + 1);
        for errors in [t + 1, 2 * t + 1, 20] {
            let rate = measured_rate(&code, errors, SEED ^ u64::from(t * 100 + errors));
            let sd = (theory * (1.0 - theory) / f64::from(SAMPLES)).sqrt();
            println!(
                "BCH(255, {}), t = {t}, {errors} errors: measured {rate:.4}, estimate {theory:.4}, 1/t! = {:.4}",
                255 - 8 * t,
                1.0 / (1..=t).product::<u32>() as f64
            );
            assert!(
                (rate - theory).abs() <= 5.0 * sd + 0.1 * theory,
                "t = {t}, {errors} errors: measured {rate}, estimate {theory}, seed {SEED:#x}"
            );
        }
    }
}

#[test]
fn shortened_sector_code_does_not_miscorrect_in_practice() {
    // 512 B, t = 12: the estimate is ~1e-12, so a few thousand words see none.
    let code = Bch::new(13, 12, 4096).unwrap();
    let theory = code.miscorrection_probability(13);
    assert!(theory < 1e-10, "{theory}");
    for errors in [13, 24] {
        let rate = measured_rate(&code, errors, 0x0512_0000 + u64::from(errors));
        println!("512 B, t = 12, {errors} errors: measured {rate}, estimate {theory:.2e}");
        assert_eq!(rate, 0.0);
    }
}
