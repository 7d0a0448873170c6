//! The metadata-only decision: what the decoder would do with a codeword that has a given
//! number of bit errors, for a simulator that does not keep the bytes.

use crate::cost::DecodeCost;
use crate::{Bch, Decoded, Uncorrectable};

/// The decoder's verdict and cost for a codeword known only by its error count.
///
/// * `0` errors: [`Decoded::Clean`], no cost.
/// * `1..=t` errors: [`Decoded::Corrected`] with that many bits, at exactly the cost the byte
///   decoder reports ([`Bch::decode_cost`]).
/// * more than `t`: [`Uncorrectable`], at the cost of the usual failing decode. The byte
///   decoder instead *miscorrects* a small fraction of such words (it lands within `t` of
///   another codeword and returns it as corrected). The decision does not draw that outcome: a
///   simulator that wants it draws from its own seeded RNG against
///   [`Bch::miscorrection_probability`] (the crate has no randomness of its own).
///
/// # The miscorrection estimate
///
/// A word with more than `t` errors is miscorrected when its syndrome is that of some error
/// pattern of weight at most `t` among the `n` positions of the (shortened) code. Treating the
/// syndrome of a heavy error pattern as uniform over the `2^r` values gives
///
/// ```text
///   P(miscorrect) ~= sum_{i=0..t} C(n, i) / 2^r
/// ```
///
/// the ratio of decodable syndromes to all syndromes (the sphere-packing count of bounded
/// distance decoding). For a full-length code (`n = 2^m - 1`, `r = m t`) it is about `1/t!`,
/// the figure McEliece and Swanson derived for Reed–Solomon codes ("On the decoder error
/// probability for Reed–Solomon codes", IEEE Trans. Inf. Theory 32(5), 1986); for binary BCH
/// it rests on their weight distribution being close to binomial (Kasami, Fujiwara and Lin,
/// "An approximation to the weight distribution of binary linear codes", IEEE Trans. Inf.
/// Theory 31(6), 1985). Shortening divides it by roughly `(2^m / n)^t`: for 512 B with t = 12
/// (n = 4252, r = 156) it is about 1e-12. The integration test `miscorrection` measures it on
/// full-length codes (t = 2, 3, 4 over GF(2^8)) and on the 512-byte code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// What [`Bch::decode`] returns (uncorrectable rather than miscorrected beyond `t`).
    pub result: Result<Decoded, Uncorrectable>,
    /// What [`Bch::decode`] adds to its cost.
    pub cost: DecodeCost,
}

impl Bch {
    /// What decoding a codeword with `error_count` bit errors gives, without the bytes.
    pub fn decide(&self, error_count: u32) -> Outcome {
        let result = match error_count {
            0 => Ok(Decoded::Clean),
            e if e <= self.t => Ok(Decoded::Corrected { bits: e }),
            _ => Err(Uncorrectable),
        };
        Outcome { result, cost: self.decode_cost(error_count) }
    }

    /// The probability that a word with `error_count` errors is miscorrected rather than
    /// detected: 0 up to `t`, beyond it the estimate `sum_{i<=t} C(n,i) / 2^r` (its derivation
    /// and sources are in the documentation of [`Outcome`]).
    pub fn miscorrection_probability(&self, error_count: u32) -> f64 {
        if error_count <= self.t {
            return 0.0;
        }
        let n = f64::from(self.codeword_bits());
        let r = f64::from(self.parity_bits);
        // ln C(n, i) by the product formula, summed as probabilities (each term <= 1 or tiny).
        let mut ln_c = 0.0f64;
        let mut p = 0.0f64;
        for i in 0..=self.t {
            if i > 0 {
                ln_c += (n - f64::from(i) + 1.0).ln() - f64::from(i).ln();
            }
            p += (ln_c - r * std::f64::consts::LN_2).exp();
        }
        p.min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_length_estimate_is_about_one_over_t_factorial() {
        for (t, fact) in [(2u32, 2.0), (3, 6.0), (4, 24.0)] {
            let c = Bch::new(8, t, 255 - 8 * t).unwrap();
            let p = c.miscorrection_probability(t + 1);
            assert!((p * fact - 1.0).abs() < 0.05, "t = {t}: {p} vs 1/{fact}");
        }
        let c = Bch::new(13, 12, 4096).unwrap();
        let p = c.miscorrection_probability(13);
        assert!(p > 1e-14 && p < 1e-10, "{p}");
        assert_eq!(c.miscorrection_probability(12), 0.0);
    }

    #[test]
    fn decisions() {
        let c = Bch::new(13, 12, 4096).unwrap();
        assert_eq!(c.decide(0), Outcome { result: Ok(Decoded::Clean), cost: DecodeCost::default() });
        assert_eq!(c.decide(5).result, Ok(Decoded::Corrected { bits: 5 }));
        assert_eq!(c.decide(12).result, Ok(Decoded::Corrected { bits: 12 }));
        assert_eq!(c.decide(13).result, Err(Uncorrectable));
        assert_eq!(c.decide(13).cost.flips, 0);
        assert_eq!(c.decide(13).cost.chien_ops, c.decide(12).cost.chien_ops);
    }
}
