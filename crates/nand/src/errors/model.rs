//! The error model's configuration and its resolved form for one cell type.

use rand::Rng;
use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};

use super::draw::draw_bit_errors;
use super::rber::{PageAge, RberParams, RberTerms, default_page_factors};
use super::retry::{ReadAttempt, RetryConfig};
use super::wear_out::WearOutParams;
use crate::cell::{CellType, PageType};

/// Configuration of the raw-bit-error model. Cell-dependent values may be left out and default
/// to the cell type's (the cell type itself comes from the timing configuration).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorModelConfig {
    /// `false` turns the model off, as if the table were absent (to run a preset that turns it
    /// on without bit errors: `--set ecc.errors.enabled=false`). Default: true.
    #[serde(default = "default_enabled", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// Parameters of `RBER = e + a·N^k + b·N^m·t^n + c·N^p·r^q` (t in days). Default: the
    /// cell type's ([`RberParams::defaults`]; sources in `docs/errors.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rber: Option<RberParams>,
    /// RBER multiplier per page type, in word-line order (`[LSB, MSB]` for MLC, ...). Default:
    /// proportional to the page's read-reference voltages, mean 1 (MLC `[0.67, 1.33]`, TLC
    /// `[0.43, 0.86, 1.71]`; chosen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_factors: Option<Vec<f64>>,
    /// Upper bound on the RBER of a read. Default: 0.5 (a bit read at random is wrong half the
    /// time; the power law has no such bound of its own).
    #[serde(default = "default_max_rber")]
    pub max_rber: f64,
    /// Read retry and soft decoding. Default: the eight-step table, soft decoding off.
    #[serde(default)]
    pub retry: RetryConfig,
    /// Program/erase failures rising with wear. Default: the cell type's
    /// ([`WearOutParams::defaults`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wear_out: Option<WearOutParams>,
}

fn default_max_rber() -> f64 {
    0.5
}

fn default_enabled() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Default for ErrorModelConfig {
    fn default() -> Self {
        ErrorModelConfig {
            enabled: true,
            rber: None,
            page_factors: None,
            max_rber: default_max_rber(),
            retry: RetryConfig::default(),
            wear_out: None,
        }
    }
}

impl ErrorModelConfig {
    /// The same configuration with every cell-dependent default filled in.
    pub fn resolved(&self, cell: CellType) -> ErrorModelConfig {
        ErrorModelConfig {
            rber: Some(self.rber.unwrap_or_else(|| RberParams::defaults(cell))),
            page_factors: Some(self.page_factors.clone().unwrap_or_else(|| default_page_factors(cell))),
            wear_out: Some(self.wear_out.unwrap_or_else(|| WearOutParams::defaults(cell))),
            ..self.clone()
        }
    }

    /// Checks every field for `cell`; the error names the first bad one (`rber.k: ...`).
    pub fn validate(&self, cell: CellType) -> Result<(), ConfigError> {
        let c = self.resolved(cell);
        c.rber.expect("resolved").validate().map_err(|e| e.within("rber"))?;
        let factors = c.page_factors.as_ref().expect("resolved");
        let bits = cell.bits();
        ensure(factors.len() == bits, "page_factors", || {
            format!("{cell} cells have {bits} page types; give {bits} factors (got {})", factors.len())
        })?;
        for &f in factors {
            ensure(f.is_finite() && f > 0.0, "page_factors", || {
                format!("must be finite numbers > 0 (got {f})")
            })?;
        }
        let m = self.max_rber;
        ensure(m.is_finite() && m > 0.0 && m <= 0.5, "max_rber", || {
            format!("must be in (0, 0.5] (got {m})")
        })?;
        self.retry.validate().map_err(|e| e.within("retry"))?;
        c.wear_out.expect("resolved").validate().map_err(|e| e.within("wear_out"))
    }

    /// The resolved model for `cell`, or the first configuration error.
    pub fn model(&self, cell: CellType) -> Result<ErrorModel, ConfigError> {
        self.validate(cell)?;
        let c = self.resolved(cell);
        let mut page_factors = [0.0; 4];
        let f = c.page_factors.expect("resolved");
        page_factors[..f.len()].copy_from_slice(&f);
        Ok(ErrorModel {
            cell,
            rber: c.rber.expect("resolved"),
            page_factors,
            max_rber: c.max_rber,
            retry: c.retry,
            wear_out: c.wear_out.expect("resolved"),
        })
    }
}

/// The resolved raw-bit-error model of one cell type: pure functions of a page's type and age,
/// plus draws from an RNG the caller owns. Build it with [`ErrorModelConfig::model`].
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorModel {
    cell: CellType,
    rber: RberParams,
    page_factors: [f64; 4],
    max_rber: f64,
    retry: RetryConfig,
    wear_out: WearOutParams,
}

impl ErrorModel {
    /// The default model of `cell`.
    pub fn defaults(cell: CellType) -> ErrorModel {
        ErrorModelConfig::default().model(cell).expect("the defaults are valid")
    }

    /// The cell type modelled.
    pub fn cell(&self) -> CellType {
        self.cell
    }

    /// The retry table and soft step.
    pub fn retry(&self) -> &RetryConfig {
        &self.retry
    }

    /// The program/erase failure model.
    pub fn wear_out(&self) -> &WearOutParams {
        &self.wear_out
    }

    /// The RBER terms of a `page`-type page at `age` on the first read, with the page-type
    /// factor applied (not clamped). Panics if `page` is not a page type of this cell.
    pub fn terms(&self, page: PageType, age: &PageAge) -> RberTerms {
        let i = self.cell.page_types().iter().position(|&t| t == page);
        let i = i.unwrap_or_else(|| panic!("{} cells have no {page} pages", self.cell));
        self.rber.terms(age).scaled(self.page_factors[i])
    }

    /// The RBER a read of a `page`-type page at `age` sees on `attempt`, at most `max_rber`.
    pub fn rber(&self, page: PageType, age: &PageAge, attempt: ReadAttempt) -> f64 {
        let t = self.terms(page, age);
        let shift = self.retry.shift_factor(attempt);
        let total = t.floor + t.wear + (t.retention + t.disturb) * shift;
        (total * self.retry.total_factor(attempt)).min(self.max_rber)
    }

    /// Draws the bit errors of one `codeword_bits`-bit codeword of that read.
    pub fn draw_errors<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        page: PageType,
        age: &PageAge,
        attempt: ReadAttempt,
        codeword_bits: u32,
    ) -> u32 {
        draw_bit_errors(rng, self.rber(page, age, attempt), codeword_bits)
    }

    /// Probability that programming one page of a block with `pe_cycles` P/E cycles fails.
    pub fn program_failure(&self, pe_cycles: u32) -> f64 {
        self.wear_out.program_failure(pe_cycles)
    }

    /// Probability that erasing a block with `pe_cycles` P/E cycles fails.
    pub fn erase_failure(&self, pe_cycles: u32) -> f64 {
        self.wear_out.erase_failure(pe_cycles)
    }
}
