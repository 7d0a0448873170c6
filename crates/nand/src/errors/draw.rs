//! Drawing bit errors for one codeword: how many (binomial in the codeword's bits), where
//! (distinct positions, for payload mode), and the probability that a code correcting `t`
//! bits fails, for reports and tests.
//!
//! The count comes from `rand_distr`'s [`Binomial`], which is exact: for a mean below 10 it
//! inverts the CDF (one uniform draw, a few multiplications; the common case, since a codeword
//! the ECC can correct has a small mean), above that it uses BTPE rejection. Both draw only from
//! the RNG they are given, so the same seed gives the same errors.

use rand::{Rng, RngExt};
use rand_distr::{Binomial, Distribution};

/// Expected bit errors in a codeword of `bits` bits read at `rber`.
pub fn expected_errors(rber: f64, bits: u32) -> f64 {
    rber * bits as f64
}

/// Draws the number of bit errors in a codeword of `bits` bits, each wrong with probability
/// `rber` independently (binomial). `rber` is clamped to [0, 1]; NaN counts as 0.
pub fn draw_bit_errors<R: Rng + ?Sized>(rng: &mut R, rber: f64, bits: u32) -> u32 {
    let p = if rber.is_nan() { 0.0 } else { rber.clamp(0.0, 1.0) };
    if p == 0.0 || bits == 0 {
        return 0;
    }
    let binomial = Binomial::new(bits as u64, p).expect("p is in [0, 1]");
    binomial.sample(rng) as u32
}

/// Fills `out` with `count` distinct bit positions in `[0, bits)`, in increasing order (Floyd's
/// algorithm: exactly `count` draws from `rng`). Panics if `count > bits`: more errors than bits
/// is a caller's bug.
pub fn draw_error_positions<R: Rng + ?Sized>(rng: &mut R, count: u32, bits: u32, out: &mut Vec<u32>) {
    assert!(count <= bits, "{count} error positions asked of a {bits}-bit codeword");
    out.clear();
    for j in bits - count..bits {
        let t = rng.random_range(0..=j);
        // `j` cannot be in `out` yet: every earlier pick was at most j - 1.
        out.push(if out.contains(&t) { j } else { t });
    }
    out.sort_unstable();
}

/// Probability that a codeword of `bits` bits read at `rber` has more than `correctable` bit
/// errors: the binomial upper tail, summed directly (in log space, so tails of 1e-30 are not
/// lost to `1 - (1 - tiny)`).
pub fn codeword_failure_probability(rber: f64, bits: u32, correctable: u32) -> f64 {
    let p = if rber.is_nan() { 0.0 } else { rber.clamp(0.0, 1.0) };
    if correctable >= bits || p == 0.0 {
        return 0.0;
    }
    if p == 1.0 {
        return 1.0;
    }
    let n = bits as f64;
    let ln_odds = (p / (1.0 - p)).ln();
    // ln P(X = i), stepped from i = 0 with P(i+1)/P(i) = (n - i)/(i + 1) · p/(1 - p).
    let mut ln_pmf = n * (-p).ln_1p();
    let mut lower = 0.0; // P(X <= correctable), for the case where that is the small side
    for i in 0..=correctable {
        if i > 0 {
            ln_pmf += ((n - (i - 1) as f64) / i as f64).ln() + ln_odds;
        }
        lower += ln_pmf.exp();
    }
    let mean = n * p;
    if (correctable as f64) < mean {
        // Most of the mass is above `correctable`: the lower sum is the accurate side.
        return (1.0 - lower).clamp(0.0, 1.0);
    }
    let mut upper = 0.0;
    for i in correctable + 1..=bits {
        ln_pmf += ((n - (i - 1) as f64) / i as f64).ln() + ln_odds;
        let term = ln_pmf.exp();
        upper += term;
        if term < upper * 1e-17 {
            break;
        }
    }
    upper.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use sim::SimRng;

    const CW: u32 = 512 * 8;

    #[test]
    fn same_seed_same_errors() {
        let draw = |seed| {
            let mut rng = SimRng::seed_from_u64(seed);
            let mut pos = Vec::new();
            (0..200)
                .map(|i| {
                    let k = draw_bit_errors(&mut rng, 1e-4 * (i % 7) as f64, CW);
                    draw_error_positions(&mut rng, k, CW, &mut pos);
                    (k, pos.clone())
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(11), draw(11));
        assert_ne!(draw(11), draw(12));
    }

    #[test]
    fn binomial_mean_and_variance_match() {
        // Three regimes of the sampler: tiny p (inversion, mean 0.04), moderate (inversion,
        // mean 4) and large (BTPE, mean 41).
        for (p, seed) in [(1e-5, 1), (1e-3, 2), (1e-2, 3)] {
            let mut rng = SimRng::seed_from_u64(seed);
            let trials = 200_000;
            let xs: Vec<f64> = (0..trials).map(|_| draw_bit_errors(&mut rng, p, CW) as f64).collect();
            let mean = xs.iter().sum::<f64>() / trials as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (trials - 1) as f64;
            let (mu, sigma2) = (CW as f64 * p, CW as f64 * p * (1.0 - p));
            // Mean within 5 standard errors; variance within 5%.
            assert!((mean - mu).abs() < 5.0 * (sigma2 / trials as f64).sqrt(), "p={p}: mean {mean} vs {mu}");
            assert!((var / sigma2 - 1.0).abs() < 0.05, "p={p}: variance {var} vs {sigma2}");
        }
    }

    #[test]
    fn degenerate_rates() {
        let mut rng = SimRng::seed_from_u64(5);
        assert_eq!(draw_bit_errors(&mut rng, 0.0, CW), 0);
        assert_eq!(draw_bit_errors(&mut rng, f64::NAN, CW), 0);
        assert_eq!(draw_bit_errors(&mut rng, 1.0, CW), CW);
        assert_eq!(draw_bit_errors(&mut rng, 0.3, 0), 0);
        assert_eq!(codeword_failure_probability(0.0, CW, 12), 0.0);
        assert_eq!(codeword_failure_probability(1.0, CW, 12), 1.0);
    }

    #[test]
    fn failure_probability_matches_known_values() {
        // n = 10, p = 0.5, t = 7: P(X > 7) = (45 + 10 + 1) / 1024.
        let want = 56.0 / 1024.0;
        assert!((codeword_failure_probability(0.5, 10, 7) - want).abs() < 1e-12);
        // Mean far above t: nearly always fails. Mean far below: a tiny but nonzero tail.
        assert!(codeword_failure_probability(0.01, CW, 12) > 0.999);
        let tiny = codeword_failure_probability(1e-6, CW, 12);
        assert!(tiny > 0.0 && tiny < 1e-40, "{tiny}");
    }

    #[test]
    fn failure_probability_agrees_with_draws() {
        let (p, t) = (1.5e-3, 12); // mean 6.1: P(X > 12) is about 1%
        let want = codeword_failure_probability(p, CW, t);
        let mut rng = SimRng::seed_from_u64(9);
        let trials = 200_000;
        let fails = (0..trials).filter(|_| draw_bit_errors(&mut rng, p, CW) > t).count() as f64;
        let got = fails / trials as f64;
        let se = (want * (1.0 - want) / trials as f64).sqrt();
        assert!((got - want).abs() < 5.0 * se, "{got} vs {want}");
    }

    proptest! {
        #[test]
        fn positions_are_distinct_sorted_and_in_range(seed: u64, bits in 1u32..5000, frac in 0.0f64..=1.0) {
            let count = ((bits as f64) * frac) as u32;
            let mut rng = SimRng::seed_from_u64(seed);
            let mut pos = vec![7, 7, 7];
            draw_error_positions(&mut rng, count.min(200), bits, &mut pos);
            prop_assert_eq!(pos.len() as u32, count.min(200));
            prop_assert!(pos.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(pos.iter().all(|&b| b < bits));
        }

        #[test]
        fn failure_probability_falls_with_correction(p in 1e-6f64..0.05, t in 0u32..60) {
            let a = codeword_failure_probability(p, CW, t);
            let b = codeword_failure_probability(p, CW, t + 1);
            prop_assert!((0.0..=1.0).contains(&a));
            prop_assert!(b <= a * (1.0 + 1e-9) + 1e-300, "t={} {} -> {}", t, a, b);
        }
    }
}
