//! Read retry: when a read fails ECC, the controller reads the page again with its read-reference
//! voltages moved to where the shifted threshold-voltage distributions now sit, stepping through
//! a table the chip provides; after the last step it may fall back to soft-decision decoding.
//!
//! ```text
//!   First ──fail──> Retry(0) ──fail──> Retry(1) ... Retry(last) ──fail──> Soft ──fail──> uncorrectable
//!   1 tR+xfer       1 tR+xfer          1 tR+xfer                          extra_reads tR + decode
//! ```
//!
//! What a step undoes: retention loss and read disturb *shift* distributions, which moved
//! reference voltages can follow; wear *widens* them, which no voltage undoes. So a step scales
//! the retention and disturb terms of the RBER by its factor and leaves the floor and wear
//! terms alone. Soft decoding scales the whole remaining RBER (it uses reliability information,
//! not better voltages). This split and every default number here are *chosen*; the structure
//! (a per-chip table walked step by step, each step a full page read) follows Park et al.,
//! "Reducing Solid-State Drive Read Latency by Optimizing Read-Retry", ASPLOS 2021, and Ye et
//! al., "Achieving Near-Zero Read Retry for 3D NAND Flash Memory", ASPLOS 2024 (which reports
//! "over 3 read retries on average" for state-of-the-art tables once flash is aged to 3K P/E).

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};

/// One read of a page in the retry sequence.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReadAttempt {
    /// The ordinary read at the default reference voltages.
    First,
    /// Retry-table step `i` (0-based).
    Retry(usize),
    /// Soft-decision decoding after the last retry step.
    Soft,
}

/// What one attempt costs the caller, who charges it (the model only counts).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AttemptCost {
    /// Full array reads, each one tR plus the page's transfer.
    pub array_reads: u32,
    /// ECC-core cycles on top of the usual hard decode.
    pub extra_decode_cycles: u64,
}

/// Soft-decision decoding, the last resort after the retry table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoftDecision {
    /// Whether a read that fails every retry step is decoded with soft information. Default:
    /// false.
    #[serde(default)]
    pub enabled: bool,
    /// The RBER a soft decode effectively faces, as a fraction of the last retry step's: soft
    /// information lets the decoder correct as if this fraction of the errors were there.
    /// Default: 0.1 (chosen).
    #[serde(default = "default_soft_factor")]
    pub rber_factor: f64,
    /// Extra array reads (tR + transfer each) to sense the soft information. Default: 6
    /// (chosen: about what 3-bit soft information around a page's reference voltages takes).
    #[serde(default = "default_soft_reads")]
    pub extra_reads: u32,
    /// Extra ECC-core cycles of the soft decode. Default: 200000 (chosen: ten times the
    /// firmware's default hard-decode cost of 20000).
    #[serde(default = "default_soft_cycles")]
    pub decode_cycles: u64,
}

fn default_soft_factor() -> f64 {
    0.1
}
fn default_soft_reads() -> u32 {
    6
}
fn default_soft_cycles() -> u64 {
    200_000
}

impl Default for SoftDecision {
    fn default() -> Self {
        SoftDecision {
            enabled: false,
            rber_factor: default_soft_factor(),
            extra_reads: default_soft_reads(),
            decode_cycles: default_soft_cycles(),
        }
    }
}

/// Read-retry configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    /// Whether a read that fails ECC is retried. Default: true.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The retry table: for each step in order, the fraction of the retention and read-disturb
    /// errors still there at that step's voltages. Each step costs one tR plus transfer.
    /// Default: `[0.7, 0.5, 0.35, 0.25, 0.18, 0.13, 0.1, 0.08]` (chosen: eight steps, each
    /// closer to the shifted distributions).
    #[serde(default = "default_steps")]
    pub steps: Vec<f64>,
    /// Soft-decision decoding after the last step. Default: off.
    #[serde(default)]
    pub soft: SoftDecision,
}

fn yes() -> bool {
    true
}
fn default_steps() -> Vec<f64> {
    vec![0.7, 0.5, 0.35, 0.25, 0.18, 0.13, 0.1, 0.08]
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig { enabled: true, steps: default_steps(), soft: SoftDecision::default() }
    }
}

impl RetryConfig {
    /// Checks the table and the soft step; the error names the first bad field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.enabled {
            ensure(!self.steps.is_empty(), "steps", || {
                "must list at least one step when retry is enabled (or set enabled = false)".into()
            })?;
        }
        for (i, &f) in self.steps.iter().enumerate() {
            ensure(f.is_finite() && (0.0..=1.0).contains(&f), "steps", || {
                format!("step {i} must be a fraction in [0, 1] (got {f})")
            })?;
        }
        let f = self.soft.rber_factor;
        ensure(f.is_finite() && (0.0..=1.0).contains(&f), "soft.rber_factor", || {
            format!("must be a fraction in [0, 1] (got {f})")
        })
    }

    /// The attempts a read may make, in order: the first read, then each table step if retry
    /// is enabled, then the soft decode if enabled.
    pub fn attempts(&self) -> impl Iterator<Item = ReadAttempt> + '_ {
        let steps = if self.enabled { self.steps.len() } else { 0 };
        std::iter::once(ReadAttempt::First)
            .chain((0..steps).map(ReadAttempt::Retry))
            .chain(self.soft.enabled.then_some(ReadAttempt::Soft))
    }

    /// What `attempt` costs.
    pub fn cost(&self, attempt: ReadAttempt) -> AttemptCost {
        match attempt {
            ReadAttempt::First | ReadAttempt::Retry(_) => {
                AttemptCost { array_reads: 1, extra_decode_cycles: 0 }
            }
            ReadAttempt::Soft => AttemptCost {
                array_reads: self.soft.extra_reads,
                extra_decode_cycles: self.soft.decode_cycles,
            },
        }
    }

    /// The fraction of the shift (retention + disturb) errors left at `attempt`; soft decoding
    /// reads at the last step's voltages. Panics on a step beyond the table (a caller's bug).
    pub fn shift_factor(&self, attempt: ReadAttempt) -> f64 {
        match attempt {
            ReadAttempt::First => 1.0,
            ReadAttempt::Retry(i) => self.steps[i],
            ReadAttempt::Soft => self.steps.last().copied().filter(|_| self.enabled).unwrap_or(1.0),
        }
    }

    /// The factor on the whole RBER at `attempt` (the soft decode's; 1 otherwise).
    pub fn total_factor(&self, attempt: ReadAttempt) -> f64 {
        if attempt == ReadAttempt::Soft { self.soft.rber_factor } else { 1.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_follow_the_table() {
        let mut r = RetryConfig { steps: vec![0.5, 0.2], ..RetryConfig::default() };
        let v: Vec<_> = r.attempts().collect();
        assert_eq!(v, [ReadAttempt::First, ReadAttempt::Retry(0), ReadAttempt::Retry(1)]);
        r.soft.enabled = true;
        assert_eq!(r.attempts().last(), Some(ReadAttempt::Soft));
        assert_eq!(r.cost(ReadAttempt::Soft), AttemptCost { array_reads: 6, extra_decode_cycles: 200_000 });
        assert_eq!(r.cost(ReadAttempt::Retry(1)), AttemptCost { array_reads: 1, extra_decode_cycles: 0 });
        r.enabled = false;
        assert_eq!(r.attempts().collect::<Vec<_>>(), [ReadAttempt::First, ReadAttempt::Soft]);
        assert_eq!(r.shift_factor(ReadAttempt::Soft), 1.0);
    }

    #[test]
    fn default_table_is_decreasing() {
        let r = RetryConfig::default();
        r.validate().unwrap();
        assert!(r.steps.windows(2).all(|w| w[1] < w[0]));
        assert!(r.steps.iter().all(|&f| f < 1.0));
    }

    #[test]
    fn bad_tables_are_one_line_errors() {
        let empty = RetryConfig { steps: vec![], ..RetryConfig::default() };
        let e = empty.validate().unwrap_err();
        assert_eq!(e.field, "steps");
        assert!(!e.to_string().contains('\n'), "{e}");
        RetryConfig { enabled: false, ..empty }.validate().unwrap();
        for bad in [vec![0.5, f64::NAN], vec![-0.1], vec![1.5], vec![f64::INFINITY]] {
            let e = RetryConfig { steps: bad, ..RetryConfig::default() }.validate().unwrap_err();
            assert_eq!(e.field, "steps", "{e}");
        }
        let mut soft = RetryConfig::default();
        soft.soft.rber_factor = -1.0;
        assert_eq!(soft.validate().unwrap_err().field, "soft.rber_factor");
    }

    #[test]
    fn toml_round_trip_and_unknown_fields() {
        let r: RetryConfig =
            toml::from_str("steps = [0.6, 0.3]\n[soft]\nenabled = true\nextra_reads = 4").unwrap();
        assert_eq!(r.steps, [0.6, 0.3]);
        assert!(r.soft.enabled && r.soft.extra_reads == 4 && r.soft.rber_factor == 0.1);
        assert!(toml::from_str::<RetryConfig>("step = [0.5]").is_err());
    }
}
