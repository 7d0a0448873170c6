//! Page stores: where a programmed page's tags, sequence number and payload live.
//!
//! * [`MetaStore`]: no payload, tags only (2 bytes per mapping unit) — large devices, sweeps.
//! * [`MemoryStore`]: payloads and full OOB in RAM — conformance tests with real data.
//! * [`ImageStore`]: a NAND image file (superblock, block table, OOB records, page data) that
//!   survives the process and can be reopened — live serving and crash recovery. Its writes
//!   go to the file on a thread of its own, in order (`behind.rs`).

mod behind;
mod image;
mod image_format;
mod memory;
mod meta;

use std::io;

pub use image::{ImageError, ImageStore, ScannedImage};
pub use memory::MemoryStore;
pub use meta::MetaStore;

use crate::address::{BlockIdx, PageIdx};
use crate::oob::Oob;
use crate::parity::ParityLayout;

/// Storage behind a [`FlashArray`](crate::FlashArray).
///
/// The array calls these methods only after it has checked the NAND rules, so an implementer
/// may assume every call is legal: pages of a block arrive in order, reads name programmed
/// pages, erases name good blocks. An implementer must not reorder or drop programs, and must
/// not keep state that the array does not know about except tags, sequence numbers and
/// payloads.
pub trait PageStore {
    /// Records a programmed page. `data`, when given, is one whole page; a payload store keeps
    /// it (a missing payload reads back as zeroes). `parity`, when given, is the page's ECC
    /// parity (see [`crate::parity`]); a store that keeps parity keeps it with the page.
    fn program(
        &mut self,
        page: PageIdx,
        oob: &Oob,
        data: Option<&[u8]>,
        parity: Option<&[u8]>,
    ) -> io::Result<()>;

    /// Fills the tags (and the sequence number, where kept) of `oob`, whose LPNs the array has
    /// already filled, and the payload into `data` if given (zeroes if the store keeps none).
    fn read(&mut self, page: PageIdx, oob: &mut Oob, data: Option<&mut [u8]>) -> io::Result<()>;

    /// Reads the payload alone into `data` (zeroes if the store keeps none), for a reader that
    /// needs none of the OOB fields the store keeps: a store that keeps them apart from the
    /// payload saves an access (the image store, a `pread`).
    fn read_payload(&mut self, page: PageIdx, data: &mut [u8]) -> io::Result<()>;

    /// Reads the page's ECC parity into `parity` (one page's worth). A page programmed
    /// without parity, or a store that keeps none, reads zeroes: the parity of all-zero data,
    /// which is what such a page's data reads as when the store keeps no payload either.
    fn read_parity(&mut self, page: PageIdx, parity: &mut [u8]) -> io::Result<()> {
        let _ = page;
        parity.fill(0);
        Ok(())
    }

    /// The code whose parity the store keeps whatever the array asks (an image made with
    /// one), if any; `None` for a store that keeps what it is given, or nothing.
    fn parity_layout(&self) -> Option<ParityLayout> {
        None
    }

    /// Forgets every page of `block`; `erase_count` is the block's count after this erase.
    fn erase(&mut self, block: BlockIdx, erase_count: u32) -> io::Result<()>;

    /// Records that `block` is bad.
    fn mark_bad(&mut self, block: BlockIdx) -> io::Result<()>;

    /// Makes everything written so far durable (a no-op for RAM stores).
    fn sync(&mut self) -> io::Result<()>;

    /// Whether page payloads are kept.
    fn keeps_payload(&self) -> bool;

    /// Bytes of RAM the store occupies.
    fn resident_bytes(&self) -> usize;

    /// The store as [`Any`](std::any::Any), to reach a concrete store's own methods.
    fn as_any(&self) -> &dyn std::any::Any;
}
