//! Program and erase failures that rise with wear: the source of grown bad blocks. A failed
//! program or erase reports a status the firmware must act on (retire the block); this module
//! only gives the probability per operation.
//!
//! ```text
//!   P_fail(N) = min(1, p_rated · (N / N_rated)^s)
//! ```
//!
//! The defaults are *chosen, not cited*: we found no published per-operation failure curve.
//! They are set so that, summed over a block's rated life, about 1% of blocks are retired by an
//! erase failure and about 1% by a program failure (for 256-page blocks), i.e. about 2% grown
//! bad blocks by rated endurance, rising steeply (s = 3) after it. The rated cycles are the
//! issue's figures: SLC 100,000 and MLC 10,000 (as on Seagate's Pulsar SSD slides), TLC 3,000,
//! QLC 1,000.

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};

use crate::cell::CellType;

/// Pages per block assumed when spreading the program-failure budget over a block's programs.
const ASSUMED_PAGES_PER_BLOCK: f64 = 256.0;
/// Share of blocks retired by each of erase and program failures over the rated life.
const RETIRED_SHARE: f64 = 0.01;
const DEFAULT_EXPONENT: f64 = 3.0;

/// Wear-dependent program/erase failure probabilities.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WearOutParams {
    /// Rated P/E cycles (N_rated). Default: SLC 100000, MLC 10000, TLC 3000, QLC 1000.
    pub rated_pe: u32,
    /// Probability that one page program fails at N = N_rated. Default: 0.01·(s+1)/(N_rated·256)
    /// (TLC: 5.2e-8).
    pub program_fail_at_rated: f64,
    /// Probability that one block erase fails at N = N_rated. Default: 0.01·(s+1)/N_rated
    /// (TLC: 1.3e-5).
    pub erase_fail_at_rated: f64,
    /// Exponent s of the rise with N. Default: 3.
    pub exponent: f64,
}

impl WearOutParams {
    /// The defaults of a cell type.
    pub fn defaults(cell: CellType) -> WearOutParams {
        let rated_pe = rated_pe(cell);
        let per_life = RETIRED_SHARE * (DEFAULT_EXPONENT + 1.0) / rated_pe as f64;
        WearOutParams {
            rated_pe,
            program_fail_at_rated: per_life / ASSUMED_PAGES_PER_BLOCK,
            erase_fail_at_rated: per_life,
            exponent: DEFAULT_EXPONENT,
        }
    }

    /// Probability that programming one page of a block with `pe_cycles` P/E cycles fails.
    pub fn program_failure(&self, pe_cycles: u32) -> f64 {
        self.at(self.program_fail_at_rated, pe_cycles)
    }

    /// Probability that erasing a block with `pe_cycles` P/E cycles fails.
    pub fn erase_failure(&self, pe_cycles: u32) -> f64 {
        self.at(self.erase_fail_at_rated, pe_cycles)
    }

    fn at(&self, p_rated: f64, pe_cycles: u32) -> f64 {
        (p_rated * (pe_cycles as f64 / self.rated_pe as f64).powf(self.exponent)).min(1.0)
    }

    /// Checks the fields; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure(self.rated_pe >= 1, "rated_pe", || "must be at least 1".into())?;
        for (name, v) in [
            ("program_fail_at_rated", self.program_fail_at_rated),
            ("erase_fail_at_rated", self.erase_fail_at_rated),
        ] {
            ensure(v.is_finite() && (0.0..=1.0).contains(&v), name, || {
                format!("must be a probability in [0, 1] (got {v})")
            })?;
        }
        let s = self.exponent;
        ensure(s.is_finite() && s >= 0.0, "exponent", || format!("must be a finite number >= 0 (got {s})"))
    }
}

/// Rated P/E cycles per cell type, the wear at which the defaults are calibrated.
pub fn rated_pe(cell: CellType) -> u32 {
    match cell {
        CellType::Slc => 100_000,
        CellType::Mlc => 10_000,
        CellType::Tlc => 3_000,
        CellType::Qlc => 1_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_rise_with_wear_and_cap_at_one() {
        let w = WearOutParams::defaults(CellType::Tlc);
        assert_eq!(w.erase_failure(0), 0.0);
        let mut last = 0.0;
        for n in [1, 100, 1_000, 3_000, 10_000, 100_000] {
            let p = w.erase_failure(n);
            assert!(p > last, "{n}: {p}");
            last = p;
        }
        assert!((w.erase_failure(3_000) - 4.0 * 0.01 / 3_000.0).abs() < 1e-15);
        assert_eq!(w.erase_failure(u32::MAX), 1.0);
        assert!(w.program_failure(3_000) < w.erase_failure(3_000));
    }

    #[test]
    fn about_one_percent_of_blocks_fail_an_erase_over_the_rated_life() {
        for cell in [CellType::Slc, CellType::Mlc, CellType::Tlc, CellType::Qlc] {
            let w = WearOutParams::defaults(cell);
            let erase: f64 = (1..=w.rated_pe).map(|n| w.erase_failure(n)).sum();
            let program: f64 = (1..=w.rated_pe).map(|n| 256.0 * w.program_failure(n)).sum();
            assert!((erase - 0.01).abs() < 0.001, "{cell}: {erase}");
            assert!((program - 0.01).abs() < 0.001, "{cell}: {program}");
        }
    }

    #[test]
    fn bad_values_name_the_field() {
        let ok = WearOutParams::defaults(CellType::Mlc);
        for (bad, field) in [
            (WearOutParams { rated_pe: 0, ..ok }, "rated_pe"),
            (WearOutParams { erase_fail_at_rated: f64::NAN, ..ok }, "erase_fail_at_rated"),
            (WearOutParams { program_fail_at_rated: 2.0, ..ok }, "program_fail_at_rated"),
            (WearOutParams { exponent: f64::NEG_INFINITY, ..ok }, "exponent"),
        ] {
            assert_eq!(bad.validate().unwrap_err().field, field);
        }
        ok.validate().unwrap();
    }
}
