//! # ssdlab-nand: the flash array under the FIL
//!
//! ```text
//!   HIL (NVMe) -> FTL (mapping, cache, GC) -> FIL (transaction scheduler) -> [ this crate ]
//! ```
//!
//! This crate models the NAND array the flash interface layer drives: its shape
//! ([`Geometry`]), typed physical addresses ([`Ppa`] and the flat [`PageIdx`], [`BlockIdx`],
//! [`DieIdx`], [`UnitAddr`]), cell and page types ([`CellType`], [`PageType`]), timing
//! ([`Timing`] -> [`TimingModel`]), and the array state with the NAND rules enforced
//! ([`FlashArray`]) over a pluggable page store ([`store::PageStore`]), and how many bits a read
//! gets wrong as the flash wears and ages ([`errors`]).
//!
//! It knows nothing of NVMe, hosts or mapping policy; timing here is arithmetic (how long a
//! phase takes) — *when* phases run is the FIL's business.
//!
//! Acronyms used throughout ssdlab: LBA (logical block address, 512 B host sector), LPN
//! (logical page number: one mapping unit), PPA (physical page address), L2P (logical-to-physical
//! map), CMT (cached mapping table), GTD (global translation directory), GC (garbage
//! collection), WL (wear levelling), WAF (write amplification factor), OP (over-provisioning),
//! HIL / FTL / FIL (host interface / flash translation / flash interface layer), TSU
//! (transaction scheduling unit), SQ / CQ (NVMe submission / completion queue), OOB (out-of-band
//! spare area of a page).
//!
//! ## Memory
//!
//! In metadata-only mode the array keeps 4 bytes per mapping unit (LPN and valid bit) and the
//! [`store::MetaStore`] 2 bytes per unit (its tag): 24 bytes per 16 KiB page of 4 KiB units,
//! plus 16 bytes per block.

mod address;
mod array;
mod cell;
pub mod errors;
mod geometry;
mod oob;
pub mod parity;
pub mod store;
mod timing;

pub use address::{BlockIdx, DieIdx, Lpn, PageIdx, Ppa, UnitAddr};
pub use array::{BlockState, FlashArray, MAX_LPN, PageState, UnitState};
pub use cell::{CellType, PageType};
pub use geometry::{Geometry, MAX_UNITS_PER_PAGE};
pub use oob::{DataTag, Oob, OobSlot};
pub use timing::{PerPageType, Timing, TimingModel};
