//! # The NAND raw-bit-error model
//!
//! ```text
//!   FTL read ─> FIL ─> NAND array read ─> [ this model: how many bits came back wrong ] ─> ECC
//! ```
//!
//! Pure and deterministic: every function here is arithmetic on a page's wear and age, or a
//! draw from an RNG the caller passes in (in ssdlab, a stream forked from the run's one seeded
//! generator), so the same seed gives the same errors. Nothing here charges time; the caller
//! turns attempts into tR, transfers and ECC cycles.
//!
//! 1. **RBER** ([`RberParams`], [`ErrorModel::rber`]): `e + a·N^k + b·N^m·t^n + c·N^p·r^q`
//!    over P/E cycles N, retention t (days) and reads since erase r ([`PageAge`]), SimpleSSD's
//!    form, with parameters per cell type and a factor per [`PageType`](crate::PageType).
//! 2. **Draws** ([`draw_bit_errors`], [`draw_error_positions`]): the errors of one codeword,
//!    binomial in its bits; optionally where they are, for payload mode.
//! 3. **Read retry** ([`RetryConfig`]): a table of steps, each a full re-read that undoes part
//!    of the retention and disturb errors, and an optional soft-decision step.
//! 4. **Wear-out** ([`WearOutParams`]): program/erase failure probabilities rising with N.
//!
//! The configuration is [`ErrorModelConfig`] (serde, defaults per cell type, validated by
//! [`ErrorModelConfig::model`]). A read in the firmware would go:
//!
//! ```
//! use nand::errors::{ErrorModel, PageAge, ReadAttempt};
//! use nand::{CellType, PageType};
//! use rand::SeedableRng;
//!
//! let model = ErrorModel::defaults(CellType::Tlc);
//! let age = PageAge { pe_cycles: 3_000, ..PageAge::FRESH };
//! let mut rng = sim::SimRng::seed_from_u64(1);
//! let correctable = 12;
//! let mut outcome = None;
//! for attempt in model.retry().attempts() {
//!     // charge model.retry().cost(attempt) here
//!     let worst = (0..32)
//!         .map(|_| model.draw_errors(&mut rng, PageType::Msb, &age, attempt, 512 * 8))
//!         .max()
//!         .unwrap();
//!     if worst <= correctable {
//!         outcome = Some(attempt);
//!         break;
//!     }
//! }
//! assert!(outcome.is_some());
//! ```
//!
//! Every default number and its source (or "chosen", with the reason) is in `docs/errors.md`.

mod draw;
mod model;
mod rber;
mod retry;
mod wear_out;

pub use draw::{codeword_failure_probability, draw_bit_errors, draw_error_positions, expected_errors};
pub use model::{ErrorModel, ErrorModelConfig};
pub use rber::{PageAge, RberParams, RberTerms, default_page_factors};
pub use retry::{AttemptCost, ReadAttempt, RetryConfig, SoftDecision};
pub use wear_out::{WearOutParams, rated_pe};

#[cfg(test)]
mod tests;
