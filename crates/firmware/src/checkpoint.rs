//! Clean-shutdown checkpoints in a NAND image's auxiliary region.
//!
//! An image is always recoverable from its OOB records alone (the newest copy of each LPN
//! wins, and the translation pages are rewritten). A clean shutdown does better: it brings the
//! device to rest ([`Device::quiesce`](crate::device::Device::quiesce)), then saves what the
//! OOB cannot tell — which units the FTL had invalidated without the media knowing (trims,
//! write-zeroes, overwrites whose old copies the OOB still names) and the block hints — so the
//! next start mounts the exact state, trims included, without repairing anything.
//!
//! ```text
//! aux offset 0    header (64 B): magic "SSDLCKP1", payload length u64, crc32 of the payload u32
//! aux offset 64   payload: the array's next program sequence number u64; per block its stream
//!                 u8 and closing sequence u64; one bit per mapping unit, set if valid
//! ```
//!
//! The header is written after the payload, and [`take`] erases it before the device serves,
//! so a checkpoint is used at most once and never after a program it does not describe (its
//! sequence number must equal the array's): a crash after start-up always recovers from OOB.

use std::io;

use nand::store::ImageStore;
use nand::{FlashArray, Geometry, UnitAddr, UnitState};

use crate::ftl::{BlockHint, Stream};

const MAGIC: &[u8; 8] = b"SSDLCKP1";
const HEADER: u64 = 64;

/// Auxiliary-region bytes an image of `geo` needs for a checkpoint.
pub fn aux_bytes(geo: &Geometry) -> u64 {
    HEADER + 8 + 9 * geo.total_blocks() as u64 + geo.total_units().div_ceil(8) as u64
}

/// Why a checkpoint could not be saved or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The device keeps no NAND image to checkpoint into.
    #[error("the device has no NAND image")]
    NoImage,
    /// The image's auxiliary region is too small (an image made by an older ssdlab).
    #[error(
        "the image has {has} bytes for checkpoints and needs {needs} (it was made by an older ssdlab); the next start recovers from the OOB"
    )]
    TooSmall {
        /// Bytes the image has.
        has: u64,
        /// Bytes a checkpoint needs.
        needs: u64,
    },
    /// The image could not be read or written.
    #[error("{doing} the checkpoint: {source}")]
    Io {
        /// What was being done: `writing`, `reading`, `erasing`.
        doing: &'static str,
        /// What the OS said.
        source: io::Error,
    },
}

fn image(array: &FlashArray) -> Result<&ImageStore, CheckpointError> {
    array.store().as_any().downcast_ref::<ImageStore>().ok_or(CheckpointError::NoImage)
}

/// An I/O error while `doing` something with the checkpoint.
fn io_error(doing: &'static str) -> impl Fn(io::Error) -> CheckpointError + Copy {
    move |source| CheckpointError::Io { doing, source }
}

/// Saves the checkpoint of a device at rest (`hints` from [`Ftl::block_hints`](crate::ftl::Ftl::block_hints))
/// and syncs the image.
pub fn save(array: &mut FlashArray, hints: &[BlockHint]) -> Result<(), CheckpointError> {
    let geo = array.geometry().clone();
    let store = image(array)?;
    if store.aux_len() < aux_bytes(&geo) {
        return Err(CheckpointError::TooSmall { has: store.aux_len(), needs: aux_bytes(&geo) });
    }
    let mut payload = Vec::with_capacity((aux_bytes(&geo) - HEADER) as usize);
    payload.extend_from_slice(&array.next_seq().to_le_bytes());
    for h in hints {
        payload.push(h.stream as u8);
        payload.extend_from_slice(&h.closed_seq.to_le_bytes());
    }
    let mut bits = vec![0u8; geo.total_units().div_ceil(8) as usize];
    for u in 0..geo.total_units() {
        if matches!(array.unit(UnitAddr(u)), UnitState::Valid(_)) {
            bits[u as usize / 8] |= 1 << (u % 8);
        }
    }
    payload.extend_from_slice(&bits);
    let mut header = [0u8; HEADER as usize];
    header[..8].copy_from_slice(MAGIC);
    header[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    header[16..20].copy_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    let io = io_error("writing");
    store.write_aux(HEADER, &payload).map_err(io)?;
    array.sync().map_err(io)?;
    image(array)?.write_aux(0, &header).map_err(io)?;
    array.sync().map_err(io)
}

/// What [`take`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// A checkpoint that describes the array: the array now holds exactly the checkpointed
    /// state; mount it clean with these hints.
    Clean(Vec<BlockHint>),
    /// No checkpoint (a crash, or a new image).
    None,
    /// A checkpoint that does not fit the array (said why); recover from the OOB.
    Stale(String),
}

/// Reads and erases the checkpoint of a reopened image, and applies it to `array` if it
/// describes it.
pub fn take(array: &mut FlashArray) -> Result<Found, CheckpointError> {
    let geo = array.geometry().clone();
    let store = image(array)?;
    if store.aux_len() < aux_bytes(&geo) {
        return Ok(Found::None);
    }
    let io = io_error("reading");
    let mut header = [0u8; HEADER as usize];
    store.read_aux(0, &mut header).map_err(io)?;
    if &header[..8] != MAGIC {
        return Ok(Found::None);
    }
    let len = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(header[16..20].try_into().expect("4 bytes"));
    let found = if len != aux_bytes(&geo) - HEADER {
        Found::Stale(format!("a {len}-byte checkpoint for a {}-byte layout", aux_bytes(&geo) - HEADER))
    } else {
        let mut payload = vec![0u8; len as usize];
        store.read_aux(HEADER, &mut payload).map_err(io)?;
        if crc32fast::hash(&payload) != crc {
            Found::Stale("the checkpoint's checksum does not match".into())
        } else {
            apply(array, &geo, &payload)
        }
    };
    image(array)?.write_aux(0, &[0u8; HEADER as usize]).map_err(io_error("erasing"))?;
    array.sync().map_err(io_error("erasing"))?;
    Ok(found)
}

fn apply(array: &mut FlashArray, geo: &Geometry, p: &[u8]) -> Found {
    let seq = u64::from_le_bytes(p[..8].try_into().expect("8 bytes"));
    if seq != array.next_seq() {
        return Found::Stale(format!(
            "the checkpoint was taken at program {seq}, the image has programs up to {}",
            array.next_seq()
        ));
    }
    let nb = geo.total_blocks() as usize;
    let mut hints = Vec::with_capacity(nb);
    for c in p[8..8 + 9 * nb].chunks_exact(9) {
        let Some(stream) = Stream::from_u8(c[0]) else {
            return Found::Stale(format!("stream {} in the checkpoint", c[0]));
        };
        hints
            .push(BlockHint { stream, closed_seq: u64::from_le_bytes(c[1..9].try_into().expect("8 bytes")) });
    }
    let bits = &p[8 + 9 * nb..];
    let valid = |u: u32| bits[u as usize / 8] & (1 << (u % 8)) != 0;
    let mut stale = Vec::new();
    for u in 0..geo.total_units() {
        match (array.unit(UnitAddr(u)), valid(u)) {
            (UnitState::Valid(_), false) => stale.push(UnitAddr(u)),
            (UnitState::Valid(_), true) | (_, false) => {}
            (_, true) => {
                return Found::Stale(format!("unit {u} is valid in the checkpoint but not on the media"));
            }
        }
    }
    for u in stale {
        array.invalidate(u);
    }
    Found::Clean(hints)
}
