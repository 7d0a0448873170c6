//! The ECC's configuration: codeword, correction strength, the decoder's costs and the error
//! model's parameters, with their validation.

use nand::errors::ErrorModelConfig;
use nand::{CellType, Geometry};
use serde::{Deserialize, Serialize};
use sim::ByteSize;
use sim::config::{ConfigError, ensure};

/// ECC configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EccConfig {
    /// Codeword size. Default: 512B.
    #[serde(default = "default_codeword")]
    pub codeword: ByteSize,
    /// Bits corrected per codeword. Default: 12 (SoftSSD's BCH).
    #[serde(default = "default_correctable")]
    pub correctable: u32,
    /// Raw bit error rate of a fresh block. Default: 0.
    #[serde(default)]
    pub rber: f64,
    /// Added to the raw bit error rate per P/E cycle of the block. Default: 0.
    #[serde(default)]
    pub rber_per_pe: f64,
    /// ECC-core cycles to correct one codeword that has errors, under the flat rate (the error
    /// model charges the BCH decoder's own operations instead). Default: 20000.
    #[serde(default = "default_correct_cycles")]
    pub correct_cycles: u64,
    /// The NAND error model (`[ecc.errors]`; every field defaults per cell type, so an empty
    /// table turns it on): replaces `rber` and `rber_per_pe`. Default: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<ErrorModelConfig>,
}

/// OOB bytes the FTL's records take per mapping unit (its LPN, tag, first-write stamp and the
/// page's sequence number, rounded up), which the parity must leave free.
pub const OOB_FTL_BYTES_PER_UNIT: u64 = 16;

fn default_codeword() -> ByteSize {
    ByteSize(512)
}
fn default_correctable() -> u32 {
    12
}
fn default_correct_cycles() -> u64 {
    20_000
}

impl Default for EccConfig {
    fn default() -> Self {
        EccConfig {
            codeword: default_codeword(),
            correctable: default_correctable(),
            rber: 0.0,
            rber_per_pe: 0.0,
            correct_cycles: default_correct_cycles(),
            errors: None,
        }
    }
}

impl EccConfig {
    /// Checks the fields against the page size, its OOB, its mapping units and the cell type.
    pub fn validate(&self, geo: &Geometry, cell: CellType) -> Result<(), ConfigError> {
        let (page_bytes, units_per_page) = (geo.page_bytes(), geo.units_per_page());
        let cw = self.codeword.bytes();
        ensure(cw >= 64 && (page_bytes as u64).is_multiple_of(cw), "codeword", || {
            format!("must be at least 64B and divide the {page_bytes}-byte page (got {})", self.codeword)
        })?;
        for (name, v) in [("rber", self.rber), ("rber_per_pe", self.rber_per_pe)] {
            ensure(v.is_finite() && (0.0..0.01).contains(&v), name, || {
                format!("must be in [0, 0.01) (got {v})")
            })?;
        }
        ensure(self.correctable >= 1, "correctable", || "must be at least 1 bit per codeword".into())?;
        let Some(errors) = self.error_model() else { return Ok(()) };
        ensure(self.rber == 0.0 && self.rber_per_pe == 0.0, "errors", || {
            "replaces rber and rber_per_pe: set those to 0 (or remove [ecc.errors])".into()
        })?;
        errors.validate(cell).map_err(|e| e.within("errors"))?;
        let code = self.code().map_err(|e| ConfigError::new("correctable", e.to_string()))?;
        let oob = geo.oob_size.bytes();
        if oob == 0 {
            return Ok(()); // a preset that does not state its OOB size (several leave it 0)
        }
        let parity = code.parity_bytes() as u64 * (page_bytes as u64 / cw);
        let ftl = OOB_FTL_BYTES_PER_UNIT * units_per_page as u64;
        ensure(parity + ftl <= oob, "correctable", || {
            format!(
                "{} bits per {} codeword need {parity} parity bytes per {page_bytes}-byte page, and the FTL's \
                 records {ftl}: more than the {oob}-byte OOB (geometry.oob_size) holds",
                self.correctable, self.codeword
            )
        })
    }

    /// Whether bit errors happen at all (the ECC core has work).
    pub fn enabled(&self) -> bool {
        self.rber > 0.0 || self.rber_per_pe > 0.0 || self.error_model().is_some()
    }

    /// The error model's configuration, if it is on (present and enabled).
    pub fn error_model(&self) -> Option<&ErrorModelConfig> {
        self.errors.as_ref().filter(|e| e.enabled)
    }

    /// The parity a payload store keeps with each page when the error model is on (the ECC
    /// then decodes the bytes read), or `None` when it is off.
    pub fn parity_layout(&self) -> Option<nand::parity::ParityLayout> {
        self.errors.as_ref()?;
        let code = self.code().ok()?;
        Some(nand::parity::ParityLayout {
            m: code.m(),
            t: code.t(),
            codeword_bytes: self.codeword.bytes() as u32,
        })
    }

    /// The BCH code: `correctable` bits per `codeword` over the smallest field that holds it.
    pub fn code(&self) -> Result<bch::Bch, bch::BchError> {
        let data_bits = (self.codeword.bytes() * 8).min(u32::MAX as u64) as u32;
        let t = self.correctable;
        // The smallest m with data + m·t parity bits within a codeword of 2^m - 1 bits.
        let m = (3..=16u32).find(|&m| (data_bits as u64 + m as u64 * t as u64) < (1u64 << m)).unwrap_or(16);
        bch::Bch::new(m, t, data_bits)
    }
}
