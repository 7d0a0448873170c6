//! On-disk format of a NAND image (all integers little-endian).
//!
//! ```text
//! offset 0            superblock (4 KiB): magic "SSDLABNI", version u32, header length u32,
//!                     header JSON (geometry, aux size), crc32 of bytes 0..4092 at 4092
//! 4 KiB               block table: per block 16 B = generation u32, erase count u32,
//!                     flags u32 (bit 0 = bad), crc32 of the first 12 bytes
//! (4 KiB aligned)     aux region (reserved for firmware checkpoints; may be empty)
//! (4 KiB aligned)     OOB records: per page 256 B = magic "OOB1" u32, block generation u32,
//!                     sequence u64, unit count u8, 7 reserved, per unit (LPN u32 or
//!                     0xFFFFFFFF, tag u16) from 24, per unit the sequence number of the
//!                     data's first program u64 from 120 (0 = the page's own),
//!                     crc32 of bytes 0..252 at 252
//! (4 KiB aligned)     page data: per page `page_size` bytes
//! (4 KiB aligned)     version 2 only: ECC parity, per page the header's code's parity
//!                     bytes for each of its codewords in order (`crate::parity`)
//! ```
//!
//! Version 1 images keep no parity (their header names no code); version 2 images name the
//! code in the header (`"parity": {"m": 13, "t": 12, "codeword_bytes": 512}`) and keep its
//! parity after the page data, so every region before it sits where it does in version 1.
//! This build reads both and writes version 1 unless the image keeps parity, so images made
//! without parity stay readable by older builds, which refuse a version 2 image by its
//! version number rather than lose its parity.
//!
//! Erasing a block bumps its generation in the block table; an OOB record whose generation is
//! not its block's current one belongs to an erased page. A program writes the data before the
//! OOB record, so a torn program leaves the page looking unprogrammed.

use serde::{Deserialize, Serialize};

use crate::address::Lpn;
use crate::geometry::Geometry;
use crate::oob::{DataTag, Oob, OobSlot};
use crate::parity::{PageParity, ParityLayout};

pub const MAGIC: &[u8; 8] = b"SSDLABNI";
/// The newest format version (an image that keeps ECC parity).
pub const VERSION: u32 = 2;
/// The version of an image that keeps no parity (as every image before version 2).
pub const VERSION_NO_PARITY: u32 = 1;
pub const SUPERBLOCK_BYTES: u64 = 4096;
pub const BLOCK_ENTRY_BYTES: u64 = 16;
pub const OOB_RECORD_BYTES: u64 = 256;
const OOB_MAGIC: u32 = u32::from_le_bytes(*b"OOB1");
const NO_LPN: u32 = u32::MAX;

/// The JSON header inside the superblock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub geometry: Geometry,
    #[serde(default)]
    pub aux_bytes: u64,
    /// The code whose parity the image keeps with each page (version 2), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity: Option<ParityLayout>,
}

impl Header {
    /// Parity bytes the image keeps per page (0 if none); an error if the code does not fit
    /// the geometry's page.
    pub fn parity_bytes(&self) -> Result<u64, String> {
        match self.parity {
            None => Ok(0),
            Some(l) => Ok(PageParity::new(l, self.geometry.page_bytes())?.page_parity_bytes() as u64),
        }
    }
}

/// Byte offsets of the regions for a geometry.
#[derive(Copy, Clone, Debug)]
pub struct Layout {
    pub blocks: u64,
    pub aux: u64,
    pub oob: u64,
    pub data: u64,
    pub parity: u64,
    pub end: u64,
    pub page_bytes: u64,
    /// Parity bytes per page (0: no parity region).
    pub parity_bytes: u64,
}

fn align(v: u64) -> u64 {
    v.div_ceil(4096) * 4096
}

impl Layout {
    /// The layout of an image of `geo` with `aux_bytes` of aux region and `parity_bytes` of
    /// parity per page.
    pub fn new(geo: &Geometry, aux_bytes: u64, parity_bytes: u64) -> Self {
        let blocks = SUPERBLOCK_BYTES;
        let aux = align(blocks + geo.total_blocks() as u64 * BLOCK_ENTRY_BYTES);
        let oob = align(aux + aux_bytes);
        let data = align(oob + geo.total_pages() as u64 * OOB_RECORD_BYTES);
        let page_bytes = geo.page_size.bytes();
        let data_end = data + geo.total_pages() as u64 * page_bytes;
        let (parity, end) = match parity_bytes {
            0 => (data_end, data_end),
            b => (align(data_end), align(data_end) + geo.total_pages() as u64 * b),
        };
        Layout { blocks, aux, oob, data, parity, end, page_bytes, parity_bytes }
    }
}

pub fn encode_superblock(h: &Header) -> Vec<u8> {
    let json = serde_json::to_vec(h).expect("header serialises");
    let mut sb = vec![0u8; SUPERBLOCK_BYTES as usize];
    assert!(json.len() <= sb.len() - 20, "image header too large");
    sb[..8].copy_from_slice(MAGIC);
    let version = if h.parity.is_some() { VERSION } else { VERSION_NO_PARITY };
    sb[8..12].copy_from_slice(&version.to_le_bytes());
    sb[12..16].copy_from_slice(&(json.len() as u32).to_le_bytes());
    sb[16..16 + json.len()].copy_from_slice(&json);
    let crc = crc32fast::hash(&sb[..4092]);
    sb[4092..].copy_from_slice(&crc.to_le_bytes());
    sb
}

/// Why a superblock was rejected.
#[derive(Debug, PartialEq, Eq)]
pub enum SuperblockError {
    Magic,
    Version(u32),
    Checksum,
    Header(String),
}

pub fn decode_superblock(sb: &[u8]) -> Result<Header, SuperblockError> {
    if sb.len() < SUPERBLOCK_BYTES as usize || &sb[..8] != MAGIC {
        return Err(SuperblockError::Magic);
    }
    let version = u32::from_le_bytes(sb[8..12].try_into().expect("4 bytes"));
    if !(VERSION_NO_PARITY..=VERSION).contains(&version) {
        return Err(SuperblockError::Version(version));
    }
    let crc = u32::from_le_bytes(sb[4092..4096].try_into().expect("4 bytes"));
    if crc32fast::hash(&sb[..4092]) != crc {
        return Err(SuperblockError::Checksum);
    }
    let len = u32::from_le_bytes(sb[12..16].try_into().expect("4 bytes")) as usize;
    if len > 4092 - 16 {
        return Err(SuperblockError::Header(format!("header length {len} is too large")));
    }
    let h: Header =
        serde_json::from_slice(&sb[16..16 + len]).map_err(|e| SuperblockError::Header(e.to_string()))?;
    if (h.parity.is_some()) != (version == VERSION) {
        return Err(SuperblockError::Header(format!(
            "a version {version} header {} parity",
            if h.parity.is_some() { "names" } else { "names no" }
        )));
    }
    h.parity_bytes().map_err(SuperblockError::Header)?;
    Ok(h)
}

/// One block-table entry.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockEntry {
    pub generation: u32,
    pub erase_count: u32,
    pub bad: bool,
}

pub fn encode_block(e: &BlockEntry) -> [u8; BLOCK_ENTRY_BYTES as usize] {
    let mut b = [0u8; BLOCK_ENTRY_BYTES as usize];
    b[..4].copy_from_slice(&e.generation.to_le_bytes());
    b[4..8].copy_from_slice(&e.erase_count.to_le_bytes());
    b[8..12].copy_from_slice(&(e.bad as u32).to_le_bytes());
    let crc = crc32fast::hash(&b[..12]);
    b[12..].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes an entry; an all-zero entry (never written) is a fresh block; a bad checksum is
/// `None`.
pub fn decode_block(b: &[u8]) -> Option<BlockEntry> {
    if b.iter().all(|&x| x == 0) {
        return Some(BlockEntry::default());
    }
    let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    if crc32fast::hash(&b[..12]) != word(12) {
        return None;
    }
    Some(BlockEntry { generation: word(0), erase_count: word(4), bad: word(8) & 1 == 1 })
}

/// Where the per-unit first-write sequence numbers start in an OOB record (after 16 slots of
/// LPN and tag at 24; 16 x 8 bytes end at 248, before the CRC at 252). Images written before
/// they existed hold zeroes there, which means "born with the page".
const BORN_AT: usize = 120;

pub fn encode_oob(oob: &Oob, generation: u32) -> [u8; OOB_RECORD_BYTES as usize] {
    let mut r = [0u8; OOB_RECORD_BYTES as usize];
    r[..4].copy_from_slice(&OOB_MAGIC.to_le_bytes());
    r[4..8].copy_from_slice(&generation.to_le_bytes());
    r[8..16].copy_from_slice(&oob.seq.to_le_bytes());
    r[16] = oob.units() as u8;
    for (i, s) in oob.slots().enumerate() {
        let at = 24 + i * 6;
        r[at..at + 4].copy_from_slice(&s.lpn.map_or(NO_LPN, |l| l.0).to_le_bytes());
        r[at + 4..at + 6].copy_from_slice(&s.tag.0.to_le_bytes());
    }
    for (i, b) in oob.borns().iter().enumerate() {
        let at = BORN_AT + i * 8;
        r[at..at + 8].copy_from_slice(&b.to_le_bytes());
    }
    let crc = crc32fast::hash(&r[..252]);
    r[252..].copy_from_slice(&crc.to_le_bytes());
    r
}

/// Decodes a record written for generation `generation` with `units` units; anything else
/// (never written, erased since, torn, corrupt) is `None`.
pub fn decode_oob(r: &[u8], generation: u32, units: u32) -> Option<Oob> {
    let word = |i: usize| u32::from_le_bytes(r[i..i + 4].try_into().expect("4 bytes"));
    if word(0) != OOB_MAGIC || word(4) != generation || r[16] as u32 != units {
        return None;
    }
    if crc32fast::hash(&r[..252]) != word(252) {
        return None;
    }
    let mut oob = Oob::empty(units);
    oob.seq = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
    for i in 0..units as usize {
        let at = 24 + i * 6;
        let lpn = word(at);
        oob.set(
            i,
            OobSlot {
                lpn: (lpn != NO_LPN).then_some(Lpn(lpn)),
                tag: DataTag(u16::from_le_bytes(r[at + 4..at + 6].try_into().expect("2 bytes"))),
            },
        );
        let at = BORN_AT + i * 8;
        oob.set_born(i, u64::from_le_bytes(r[at..at + 8].try_into().expect("8 bytes")));
    }
    Some(oob)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_image_with_parity_is_version_2_and_one_without_stays_version_1() {
        let geometry = crate::geometry::tiny();
        let plain = Header { geometry: geometry.clone(), aux_bytes: 0, parity: None };
        let sb = encode_superblock(&plain);
        assert_eq!(u32::from_le_bytes(sb[8..12].try_into().unwrap()), 1);
        assert_eq!(decode_superblock(&sb), Ok(plain.clone()));
        let layout = ParityLayout { m: 13, t: 12, codeword_bytes: 512 };
        let with = Header { geometry, aux_bytes: 0, parity: Some(layout) };
        let sb = encode_superblock(&with);
        assert_eq!(u32::from_le_bytes(sb[8..12].try_into().unwrap()), 2);
        assert_eq!(decode_superblock(&sb), Ok(with.clone()));
        // The parity region follows the page data, which stays where version 1 has it.
        let (a, b) = (
            Layout::new(&plain.geometry, 0, 0),
            Layout::new(&with.geometry, 0, with.parity_bytes().unwrap()),
        );
        assert_eq!((a.oob, a.data), (b.oob, b.data));
        assert!(b.parity >= a.end && b.end == b.parity + with.geometry.total_pages() as u64 * b.parity_bytes);
        let mut future = encode_superblock(&with);
        future[8..12].copy_from_slice(&3u32.to_le_bytes());
        let crc = crc32fast::hash(&future[..4092]);
        future[4092..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(decode_superblock(&future), Err(SuperblockError::Version(3)));
    }

    proptest! {
        #[test]
        fn oob_records_round_trip(seq in any::<u64>(), generation in any::<u32>(),
                                  slots in proptest::collection::vec((proptest::option::of(0u32..u32::MAX), any::<u16>(), any::<u64>()), 1..=16)) {
            let owned: Vec<OobSlot> = slots.iter().map(|&(l, t, _)| OobSlot { lpn: l.map(Lpn), tag: DataTag(t) }).collect();
            let mut oob = Oob::new(&owned);
            oob.seq = seq;
            for (i, &(_, _, born)) in slots.iter().enumerate() {
                oob.set_born(i, born);
            }
            let rec = encode_oob(&oob, generation);
            prop_assert_eq!(decode_oob(&rec, generation, slots.len() as u32), Some(oob));
            prop_assert_eq!(decode_oob(&rec, generation.wrapping_add(1), slots.len() as u32), None);
        }

        #[test]
        fn corrupt_records_are_rejected(byte in 0usize..256, flip in 1u8..=255) {
            let mut oob = Oob::empty(4);
            oob.seq = 99;
            let mut rec = encode_oob(&oob, 3);
            rec[byte] ^= flip;
            prop_assert_eq!(decode_oob(&rec, 3, 4), None);
        }

        #[test]
        fn block_entries_round_trip(g in any::<u32>(), e in any::<u32>(), bad in any::<bool>()) {
            let entry = BlockEntry { generation: g, erase_count: e, bad };
            prop_assert_eq!(decode_block(&encode_block(&entry)), Some(entry));
        }

        #[test]
        fn superblock_decoder_never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..5000)) {
            let _ = decode_superblock(&bytes);
        }
    }
}
