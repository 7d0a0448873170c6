//! What a mapping unit holds as it moves through the cache and the flash: a data tag
//! (metadata-only mode) or its bytes (payload stores).

use nand::DataTag;

/// The content of one mapping unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitData {
    /// Metadata-only mode: the tag that identifies what was written.
    Tag(DataTag),
    /// Payload mode: the unit's bytes.
    Bytes(Box<[u8]>),
}

impl UnitData {
    /// What an unwritten (or trimmed) unit reads as: zeroes, or tag 0.
    pub fn zero(payload: bool, unit_bytes: usize) -> UnitData {
        if payload {
            UnitData::Bytes(vec![0; unit_bytes].into_boxed_slice())
        } else {
            UnitData::Tag(DataTag(0))
        }
    }

    /// The unit's tag (for payload data, a fingerprint of its bytes).
    pub fn tag(&self) -> DataTag {
        match self {
            UnitData::Tag(t) => *t,
            UnitData::Bytes(b) => DataTag(fingerprint(b)),
        }
    }

    /// Overwrites sectors `[first, first + count)` (of `sector` bytes each) with `src`: bytes
    /// for payload data, or a new tag.
    pub fn merge(&mut self, first: usize, sector: usize, src: &UnitData) {
        match (self, src) {
            (UnitData::Bytes(dst), UnitData::Bytes(s)) => {
                dst[first * sector..first * sector + s.len()].copy_from_slice(s)
            }
            (dst, src) => *dst = UnitData::Tag(src.tag()),
        }
    }
}

/// A 16-bit fingerprint of a unit's bytes (FNV-1a folded).
pub fn fingerprint(bytes: &[u8]) -> u16 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
    }
    (h ^ (h >> 16)) as u16
}
