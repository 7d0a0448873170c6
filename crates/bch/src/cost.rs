//! Operation counts of a decode and their price in ECC-core cycles.

use std::ops::AddAssign;

use crate::Bch;

/// Field operations of one phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCount {
    /// GF(2^m) multiplications: two log look-ups, an integer add, an antilog look-up (or one
    /// of each when a factor is a power of alpha known by its log).
    pub mul: u64,
    /// GF(2^m) additions (XOR).
    pub add: u64,
    /// GF(2^m) inversions: a log look-up, a subtraction, an antilog look-up.
    pub inv: u64,
}

impl OpCount {
    /// All operations, unweighted.
    pub fn total(&self) -> u64 {
        self.mul + self.add + self.inv
    }
}

impl AddAssign for OpCount {
    fn add_assign(&mut self, o: OpCount) {
        self.mul += o.mul;
        self.add += o.add;
        self.inv += o.inv;
    }
}

/// The work of decoding: hardware syndromes, then the software Berlekamp–Massey and Chien
/// search, then bit flips. Accumulates over codewords with `+=`.
///
/// The decoder counts the field operations it executes, phase by phase. Its loops have fixed
/// trip counts (see [`Bch::decode`]), so the count depends only on the code and on the degree of
/// the error locator, which is the number of errors whenever the word is corrected: that is
/// what lets [`Bch::decode_cost`] give, without bytes, exactly the count the byte decoder
/// reports.
///
/// | phase     | runs on  | `mul`                  | `add`        | `inv` |
/// |-----------|----------|------------------------|--------------|-------|
/// | syndromes | hardware | `t*r + t`              | `t*r`        | 0     |
/// | BM        | ECC core | `sum_k min(2k,t) + t*(t+2)` | `sum_k min(2k,t) + t*(t+1)` | `t` |
/// | Chien     | ECC core | `n*L`                  | `n*L`        | 0     |
///
/// with `r` parity bits, `n` codeword bits, `k = 0..t`, and `L` the locator's degree (`L = v`
/// for `v <= t` errors). A clean word costs nothing: the hardware's division leaves a zero
/// remainder and no syndrome is evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeCost {
    /// Evaluating `S_1 .. S_2t` from the division remainder (the controller's hardware engine;
    /// not charged to the ECC core).
    pub syndrome_ops: OpCount,
    /// The error-locator polynomial, by Berlekamp–Massey.
    pub bm_ops: OpCount,
    /// The locator's roots, by Chien search over the codeword's positions.
    pub chien_ops: OpCount,
    /// Bits flipped in data and parity.
    pub flips: u64,
    /// Codewords the software decoder ran on (those with a non-zero syndrome).
    pub software_runs: u64,
}

impl DecodeCost {
    /// The operations the ECC core executes: BM and Chien (syndromes are hardware).
    pub fn software_ops(&self) -> OpCount {
        let mut ops = self.bm_ops;
        ops += self.chien_ops;
        ops
    }
}

impl AddAssign for DecodeCost {
    fn add_assign(&mut self, o: DecodeCost) {
        self.syndrome_ops += o.syndrome_ops;
        self.bm_ops += o.bm_ops;
        self.chien_ops += o.chien_ops;
        self.flips += o.flips;
        self.software_runs += o.software_runs;
    }
}

/// ECC-core cycles per counted operation.
///
/// `cycles = per_run * software_runs + mul * muls + add * adds + inv * invs + flip * flips`,
/// over the BM and Chien phases only. The defaults are estimates for an in-order embedded core
/// with the log/antilog tables in its L1 cache (a table multiply is two independent loads, an
/// add, a conditional subtract and a dependent load; an XOR is one cycle), not measurements of
/// a controller. The bench (`cargo bench -p ssdlab-bch --bench decode`) gives this host's
/// speed for comparison; see `docs/bch.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleModel {
    /// Cycles per multiplication. Default: 4.
    pub mul: u64,
    /// Cycles per addition. Default: 1.
    pub add: u64,
    /// Cycles per inversion. Default: 3.
    pub inv: u64,
    /// Cycles per flipped bit (locate the byte, read-modify-write). Default: 4.
    pub flip: u64,
    /// Fixed cycles per codeword the software decoder runs on (call, set-up). Default: 200.
    pub per_run: u64,
}

impl Default for CycleModel {
    fn default() -> Self {
        CycleModel { mul: 4, add: 1, inv: 3, flip: 4, per_run: 200 }
    }
}

impl CycleModel {
    /// ECC-core cycles for the software part of `cost`.
    pub fn cycles(&self, cost: &DecodeCost) -> u64 {
        let ops = cost.software_ops();
        self.per_run * cost.software_runs
            + self.mul * ops.mul
            + self.add * ops.add
            + self.inv * ops.inv
            + self.flip * cost.flips
    }
}

impl Bch {
    /// Syndrome evaluation: a look-up and an XOR per remainder bit at each odd power, then a
    /// squaring per even syndrome.
    pub(crate) fn syndrome_cost(&self) -> OpCount {
        let (t, r) = (u64::from(self.t), u64::from(self.parity_bits));
        OpCount { mul: t * r + t, add: t * r, inv: 0 }
    }

    /// Berlekamp–Massey's `t` steps, each a discrepancy over `min(2k, t)` terms, one
    /// inversion and one multiply for the correction factor, and a `t + 1`-term update.
    pub(crate) fn bm_cost(&self) -> OpCount {
        let t = u64::from(self.t);
        let disc: u64 = (0..t).map(|k| (2 * k).min(t)).sum();
        OpCount { mul: disc + t * (t + 2), add: disc + t * (t + 1), inv: t }
    }

    /// Chien search with a degree-`locator_degree` polynomial: one multiply and one add per
    /// term per position.
    pub(crate) fn chien_cost(&self, locator_degree: u32) -> OpCount {
        let ops = u64::from(self.codeword_bits()) * u64::from(locator_degree);
        OpCount { mul: ops, add: ops, inv: 0 }
    }

    /// What [`Bch::decode`] reports for a word with `errors` bit errors, computed without
    /// bytes.
    ///
    /// Exact for `errors <= t`. For more errors it is the usual path of a failing decode: a
    /// degree-`t` locator whose Chien search finds too few roots. The byte decoder differs in
    /// the rare words whose locator ends above degree `t` (it stops before the Chien search)
    /// and in miscorrections (a locator of degree below `t` plus its flips).
    pub fn decode_cost(&self, errors: u32) -> DecodeCost {
        if errors == 0 {
            return DecodeCost::default();
        }
        let corrected = errors <= self.t;
        let degree = errors.min(self.t);
        DecodeCost {
            syndrome_ops: self.syndrome_cost(),
            bm_ops: self.bm_cost(),
            chien_ops: self.chien_cost(degree),
            flips: if corrected { u64::from(errors) } else { 0 },
            software_runs: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures quoted in docs/bch.md for 512 B, t = 12.
    #[test]
    fn sector_code_figures() {
        let code = Bch::new(13, 12, 4096).unwrap();
        let one = code.decode_cost(1);
        assert_eq!(one.bm_ops, OpCount { mul: 270, add: 258, inv: 12 });
        assert_eq!(one.chien_ops, OpCount { mul: 4252, add: 4252, inv: 0 });
        assert_eq!(one.syndrome_ops, OpCount { mul: 1884, add: 1872, inv: 0 });
        assert_eq!(CycleModel::default().cycles(&one), 22_838);
        assert_eq!(CycleModel::default().cycles(&code.decode_cost(12)), 256_742);
    }
}
