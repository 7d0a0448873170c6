//! The raw bit error rate of one page read, as SimpleSSD writes it:
//!
//! ```text
//!   RBER(N, t, r) = e  +  a·N^k  +  b·N^m·t^n  +  c·N^p·r^q
//!                   floor  wear     retention      read disturb
//! ```
//!
//! N is the block's P/E cycles, t the time since the page was programmed **in days** (the unit
//! of SimpleSSD's fit), r the reads to the block since its erase. The per-cell-type defaults and
//! where each number comes from are in `docs/errors.md`; the short form is on
//! [`RberParams::defaults`].

use serde::{Deserialize, Serialize};
use sim::SimDuration;
use sim::config::{ConfigError, ensure};

use crate::cell::CellType;

const SECS_PER_DAY: f64 = 86_400.0;

/// How worn and how old the page being read is: the three inputs of the RBER formula.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PageAge {
    /// P/E cycles of the block (N).
    pub pe_cycles: u32,
    /// Virtual time since the page was programmed (t; the formula takes days).
    pub retention: SimDuration,
    /// Reads to the block since its last erase (r).
    pub reads_since_erase: u64,
}

impl PageAge {
    /// A page just programmed on a block never erased and never read.
    pub const FRESH: PageAge = PageAge { pe_cycles: 0, retention: SimDuration::ZERO, reads_since_erase: 0 };

    /// Retention time in days, the unit of the `b·N^m·t^n` term.
    pub fn retention_days(&self) -> f64 {
        self.retention.as_secs_f64() / SECS_PER_DAY
    }
}

/// The four terms of one RBER, kept apart so a retry can act on the ones it can undo.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct RberTerms {
    /// `e`: errors of a fresh page.
    pub floor: f64,
    /// `a·N^k`: wear-out (widened threshold-voltage distributions).
    pub wear: f64,
    /// `b·N^m·t^n`: charge lost since programming.
    pub retention: f64,
    /// `c·N^p·r^q`: charge gained from reads to neighbouring word lines.
    pub disturb: f64,
}

impl RberTerms {
    /// The sum of the terms (not clamped; see [`crate::errors::ErrorModel::rber`]).
    pub fn total(&self) -> f64 {
        self.floor + self.wear + self.retention + self.disturb
    }

    /// Every term times `f`.
    pub fn scaled(self, f: f64) -> RberTerms {
        RberTerms {
            floor: self.floor * f,
            wear: self.wear * f,
            retention: self.retention * f,
            disturb: self.disturb * f,
        }
    }
}

/// Parameters of `RBER = e + a·N^k + b·N^m·t^n + c·N^p·r^q` (t in days). Given in a config, all
/// nine are required.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RberParams {
    /// Floor: RBER of a fresh page (N = t = r = 0).
    pub e: f64,
    /// Wear coefficient.
    pub a: f64,
    /// Wear exponent on N.
    pub k: f64,
    /// Retention coefficient.
    pub b: f64,
    /// Retention exponent on N.
    pub m: f64,
    /// Retention exponent on t (days).
    pub n: f64,
    /// Read-disturb coefficient.
    pub c: f64,
    /// Read-disturb exponent on N.
    pub p: f64,
    /// Read-disturb exponent on r.
    pub q: f64,
}

impl RberParams {
    /// SimpleSSD's fit for 2y-nm MLC ("because we are using intel750"), as in its source
    /// (`ftl/read_reclaim/abstract_read_reclaim.cc`, `estimateBitError`): t in days, r in reads
    /// since erase. Cited; a preset for reproducing SimpleSSD, not a default (see
    /// [`RberParams::defaults`]: its floor makes a fresh device err, and its retention term
    /// with t in days puts a 1,000-cycle page beyond a 12-bit code within a year).
    pub const SIMPLESSD_MLC: RberParams = RberParams {
        e: 8.34e-5,
        a: 3.30e-11,
        k: 1.71,
        b: 5.56e-19,
        m: 2.49,
        n: 3.33,
        c: 6.26e-13,
        p: 1.76,
        q: 0.47,
    };

    /// A TLC fit labelled "FAST19" in an MQSim-derived simulator's configuration (taken to be
    /// Kim, Choi & Min, "Design Tradeoffs for SSD Reliability", FAST 2019; the attribution and
    /// the units of t and r there are not verified). Its fresh RBER of 1.48e-3 belongs to an
    /// LDPC-era device; a preset for comparison, not a default.
    pub const FAST19_TLC: RberParams = RberParams {
        e: 1.48e-3,
        a: 3.90e-10,
        k: 2.05,
        b: 6.28e-5,
        m: 0.14,
        n: 0.54,
        c: 3.73e-9,
        p: 0.33,
        q: 1.71,
    };

    /// The default parameters of a cell type. In short (every number's source is in
    /// `docs/errors.md`):
    ///
    /// - **Exponents**: wear (`k`) and read disturb (`p`, `q`) from SimpleSSD's 2y-nm MLC fit
    ///   for SLC and MLC, from the FAST19-labelled TLC fit for TLC and QLC; retention (`m`,
    ///   `n`) from the FAST19-labelled fit for every cell type (cited, see the presets).
    /// - **MLC**: `a` and `c` are SimpleSSD's (cited). `b = 2.85e-6` is *chosen* so retention
    ///   adds 2.5e-4 after a year at 10,000 cycles. The floor `e = 1e-7` is *chosen*:
    ///   SimpleSSD's `8.34e-5` gives 0.34 expected errors per 512 B codeword on a fresh page,
    ///   and a fresh device must read clean.
    /// - **SLC**: MLC stretched over SLC's 100,000 rated cycles instead of MLC's 10,000
    ///   (`a·0.1^k`, `b·0.1^m`, `c·0.1^p`): *chosen*, so that SLC at N errs like MLC at N/10.
    ///   Floor `e = 1e-8`, *chosen*.
    /// - **TLC**: coefficients *chosen* (the FAST19-labelled fit's are for RBERs near 1e-3 when
    ///   fresh): `a` so the wear term is 2.5e-4 at 3,000 cycles, `b` so retention adds 7.5e-4
    ///   after a year at 3,000 cycles, `c` so 100,000 reads add 1e-3 at 3,000 cycles. Floor
    ///   `e = 5e-7`, *chosen*.
    /// - **QLC**: TLC stretched over 1,000 rated cycles instead of 3,000 (`a·3^k`, `b·3^m`,
    ///   `c·3^p`), *chosen*. Floor `e = 1e-6`, *chosen*.
    pub fn defaults(cell: CellType) -> RberParams {
        const MLC: RberParams =
            RberParams { e: 1e-7, b: 2.85e-6, m: 0.14, n: 0.54, ..RberParams::SIMPLESSD_MLC };
        match cell {
            CellType::Slc => RberParams { e: 1e-8, a: 6.43e-13, b: 2.06e-6, c: 1.09e-14, ..MLC },
            CellType::Mlc => MLC,
            CellType::Tlc => {
                RberParams { e: 5e-7, a: 1.86e-11, b: 1.01e-5, c: 2.0e-13, ..RberParams::FAST19_TLC }
            }
            CellType::Qlc => {
                RberParams { e: 1e-6, a: 1.77e-10, b: 1.18e-5, c: 2.88e-13, ..RberParams::FAST19_TLC }
            }
        }
    }

    /// The four terms at `age`, before any page-type factor.
    pub fn terms(&self, age: &PageAge) -> RberTerms {
        let n = age.pe_cycles as f64;
        let t = age.retention_days();
        let r = age.reads_since_erase as f64;
        RberTerms {
            floor: self.e,
            wear: self.a * n.powf(self.k),
            retention: self.b * n.powf(self.m) * t.powf(self.n),
            disturb: self.c * n.powf(self.p) * r.powf(self.q),
        }
    }

    /// Checks every parameter is a finite number at least 0; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fields = [
            ("e", self.e),
            ("a", self.a),
            ("k", self.k),
            ("b", self.b),
            ("m", self.m),
            ("n", self.n),
            ("c", self.c),
            ("p", self.p),
            ("q", self.q),
        ];
        for (name, v) in fields {
            ensure(v.is_finite() && v >= 0.0, name, || format!("must be a finite number >= 0 (got {v})"))?;
        }
        ensure(self.e < 0.5, "e", || {
            format!("a fresh page cannot be worse than a coin toss (got {})", self.e)
        })
    }
}

/// Default RBER multiplier per page type, in word-line order (*chosen*): proportional to the
/// number of read-reference voltages the page is sensed against under the 1-2-4(-8) Gray code
/// (LSB 1, CSB 2, MSB 4, TSB 8), normalised to mean 1 so the cell-level formula is the average
/// over a word line's pages. MLC's MSB above its LSB agrees in direction with Cai et al. (DATE
/// 2012); the ratios are not taken from a measurement.
pub fn default_page_factors(cell: CellType) -> Vec<f64> {
    let levels: Vec<f64> = (0..cell.bits()).map(|i| (1u32 << i) as f64).collect();
    let mean = levels.iter().sum::<f64>() / levels.len() as f64;
    levels.iter().map(|l| l / mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(n: u32, days: u64, r: u64) -> PageAge {
        PageAge { pe_cycles: n, retention: SimDuration::from_secs(days * 86_400), reads_since_erase: r }
    }

    #[test]
    fn fresh_is_the_floor() {
        for cell in [CellType::Slc, CellType::Mlc, CellType::Tlc, CellType::Qlc] {
            let p = RberParams::defaults(cell);
            assert_eq!(p.terms(&PageAge::FRESH).total(), p.e, "{cell}");
        }
    }

    #[test]
    fn why_the_presets_are_not_defaults() {
        // SimpleSSD's floor: a third of an error per 512 B codeword on a fresh page.
        let fresh = RberParams::SIMPLESSD_MLC.terms(&PageAge::FRESH).total() * 4096.0;
        assert!((fresh - 0.34).abs() < 0.01, "{fresh}");
        // Its retention term (t in days): beyond a 12-bit code after a year at 1,000 cycles.
        let year = RberParams::SIMPLESSD_MLC.terms(&age(1_000, 365, 0)).retention * 4096.0;
        assert!(year > 12.0, "{year}");
        // The FAST19-labelled TLC fit errs six times per codeword when fresh.
        assert!(RberParams::FAST19_TLC.terms(&PageAge::FRESH).total() * 4096.0 > 6.0);
        RberParams::SIMPLESSD_MLC.validate().unwrap();
        RberParams::FAST19_TLC.validate().unwrap();
    }

    #[test]
    fn page_factors_average_one() {
        for cell in [CellType::Slc, CellType::Mlc, CellType::Tlc, CellType::Qlc] {
            let f = default_page_factors(cell);
            assert_eq!(f.len(), cell.bits());
            assert!((f.iter().sum::<f64>() / f.len() as f64 - 1.0).abs() < 1e-12);
            assert!(f.windows(2).all(|w| w[0] < w[1]), "{cell}: {f:?}");
        }
        assert_eq!(default_page_factors(CellType::Tlc), vec![3.0 / 7.0, 6.0 / 7.0, 12.0 / 7.0]);
    }

    #[test]
    fn derived_cells_follow_their_scaling_rule() {
        // SLC at N errs like MLC at N/10; QLC at N like TLC at 3N (up to rounding of the
        // coefficients to three digits).
        let (slc, mlc) = (RberParams::defaults(CellType::Slc), RberParams::defaults(CellType::Mlc));
        let (s, m) = (slc.terms(&age(50_000, 20, 30_000)), mlc.terms(&age(5_000, 20, 30_000)));
        for (x, y) in [(s.wear, m.wear), (s.retention, m.retention), (s.disturb, m.disturb)] {
            assert!((x / y - 1.0).abs() < 0.01, "{x} vs {y}");
        }
        let (qlc, tlc) = (RberParams::defaults(CellType::Qlc), RberParams::defaults(CellType::Tlc));
        let (q, t) = (qlc.terms(&age(500, 20, 30_000)), tlc.terms(&age(1_500, 20, 30_000)));
        for (x, y) in [(q.wear, t.wear), (q.retention, t.retention), (q.disturb, t.disturb)] {
            assert!((x / y - 1.0).abs() < 0.01, "{x} vs {y}");
        }
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let ok = RberParams::defaults(CellType::Tlc);
        for (set, field) in [
            (RberParams { a: -1e-9, ..ok }, "a"),
            (RberParams { n: f64::NAN, ..ok }, "n"),
            (RberParams { q: f64::INFINITY, ..ok }, "q"),
            (RberParams { e: 0.6, ..ok }, "e"),
        ] {
            let err = set.validate().unwrap_err();
            assert_eq!(err.field, field);
            assert!(!err.to_string().contains('\n'));
        }
        ok.validate().unwrap();
    }
}
