//! Log super blocks: the static description of a log space plus its head and tail words.
//!
//! ```text
//! byte   0..28    static part: magic, index, headers, data bytes, CRC32
//! byte  64..72    head word       } one cache line, written together by the back end
//! byte  72..80    head word copy  } in the journal record of a batch's commit
//! byte 128..136   tail word         its own cache line, one atomic store by the front end
//! ```
//!
//! Head and tail are sequence numbers of log headers (monotonic, below 2^48): the front end
//! owns the tail (an append is committed by advancing it), the back end owns the head
//! (advanced only after the batch it covers is durable in the public space, as part of that
//! batch's journal commit). Each word holds its sequence number in the high 48 bits and a
//! CRC-16 in the low 16 ([`LogWord`]), so a word is still written with one atomic 8-byte store
//! and a corrupt one is found: a CRC-16 detects every error within 16 consecutive bits, so
//! every change of one byte. The head is written twice, so a corrupt head is restored from
//! its copy; a corrupt tail is recovered from the log's checksummed records (issue 28; format
//! 3). Offline check and repair: `nicfs_store::check_log`.

use crate::codec::{check_crc, crc32, get_u32, get_u64, need, put_u32, put_u64};
use crate::{Geometry, LayoutError};

/// Byte offset of the head word within the log super block.
pub const LOG_HEAD_OFFSET: u64 = 64;
/// Byte offset of the copy of the head word (in the head's cache line, written with it).
pub const LOG_HEAD_COPY_OFFSET: u64 = 72;
/// Byte offset of the tail word within the log super block.
pub const LOG_TAIL_OFFSET: u64 = 128;
/// The largest sequence number a head or tail word holds (48 bits).
pub const LOG_SEQ_MAX: u64 = (1 << 48) - 1;

/// Which word of a log super block a sequence number is stored in. The role and the log's
/// index are part of the word's check, so a word copied into another role or log does not
/// pass, and neither does an all-zero word.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LogWord {
    /// The head word (and its copy): the first sequence number not yet applied.
    Head,
    /// The tail word: one past the last committed sequence number.
    Tail,
}

impl LogWord {
    fn what(self) -> &'static str {
        match self {
            LogWord::Head => "log head word",
            LogWord::Tail => "log tail word",
        }
    }

    fn check(self, index: u32, seq: u64) -> u16 {
        let mut b = [0u8; 11];
        b[0] = match self {
            LogWord::Head => b'H',
            LogWord::Tail => b'T',
        };
        b[1..5].copy_from_slice(&index.to_le_bytes());
        b[5..11].copy_from_slice(&seq.to_le_bytes()[..6]);
        crc16(&b)
    }

    /// The word holding `seq` in log `index`.
    ///
    /// # Panics
    /// If `seq` exceeds [`LOG_SEQ_MAX`] (2^48 records: 9 years at a million per second).
    pub fn encode(self, index: u32, seq: u64) -> u64 {
        assert!(seq <= LOG_SEQ_MAX, "log {index}: sequence number {seq} beyond 48 bits");
        (seq << 16) | self.check(index, seq) as u64
    }

    /// The sequence number in `word` of log `index`, if its check holds.
    pub fn decode(self, index: u32, word: u64) -> Result<u64, LayoutError> {
        let seq = word >> 16;
        let (stored, computed) = ((word & 0xffff) as u32, self.check(index, seq) as u32);
        if stored != computed {
            return Err(LayoutError::BadChecksum { what: self.what(), stored, computed });
        }
        Ok(seq)
    }

    /// The sequence number in `word`, unchecked (for readers at run time, after the words
    /// were checked when the log was opened).
    pub fn seq(word: u64) -> u64 {
        word >> 16
    }
}

/// CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xffff).
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0xffffu16;
    for &b in bytes {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}
const MAGIC: u64 = u64::from_le_bytes(*b"NICFSLOG");
const CRC_AT: usize = 24;
const WHAT: &str = "log super block";

/// The static, checksummed part of a log super block (first cache line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSuper {
    /// Index of the log space.
    pub index: u32,
    /// Header slots.
    pub headers: u32,
    /// Bytes in the data region.
    pub data_bytes: u64,
}

impl LogSuper {
    /// Encodes the static part (28 bytes).
    pub fn encode(&self) -> [u8; 28] {
        let mut b = [0u8; 28];
        put_u64(&mut b, 0, MAGIC);
        put_u32(&mut b, 8, self.index);
        put_u32(&mut b, 12, self.headers);
        put_u64(&mut b, 16, self.data_bytes);
        let crc = crc32(&b[..CRC_AT]);
        put_u32(&mut b, CRC_AT, crc);
        b
    }

    /// Decodes and checks the static part against the geometry and expected index.
    pub fn decode(b: &[u8], geo: &Geometry, index: u32) -> Result<LogSuper, LayoutError> {
        need(WHAT, b, 28)?;
        let magic = get_u64(b, 0);
        if magic != MAGIC {
            return Err(LayoutError::BadMagic { what: WHAT, found: magic });
        }
        check_crc(WHAT, b, CRC_AT)?;
        let s = LogSuper { index: get_u32(b, 8), headers: get_u32(b, 12), data_bytes: get_u64(b, 16) };
        let expect = geo.log_space(index);
        if s.index != index {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "index", value: s.index as u64 });
        }
        if s.headers != expect.headers {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "headers", value: s.headers as u64 });
        }
        if s.data_bytes != expect.data_bytes {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "data_bytes", value: s.data_bytes });
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_mismatch() {
        let geo = Geometry::compute(&crate::FormatConfig::small(4 << 20)).unwrap();
        let s = LogSuper { index: 1, headers: geo.log_headers, data_bytes: geo.log_space(1).data_bytes };
        assert_eq!(LogSuper::decode(&s.encode(), &geo, 1).unwrap(), s);
        assert!(LogSuper::decode(&s.encode(), &geo, 0).is_err());
        let mut b = s.encode();
        b[13] ^= 4;
        assert!(LogSuper::decode(&b, &geo, 1).is_err());
    }

    #[test]
    fn every_one_byte_change_of_a_word_is_found() {
        for (role, index, seq) in [
            (LogWord::Head, 0, 0),
            (LogWord::Tail, 0, 1),
            (LogWord::Head, 3, 0x1234_5678_9abc),
            (LogWord::Tail, 7, LOG_SEQ_MAX),
        ] {
            let w = role.encode(index, seq);
            assert_eq!(role.decode(index, w), Ok(seq));
            for byte in 0..8 {
                for x in 1..=255u64 {
                    assert!(
                        role.decode(index, w ^ (x << (8 * byte))).is_err(),
                        "{role:?} {seq} byte {byte} ^ {x}"
                    );
                }
            }
        }
        assert!(LogWord::Head.decode(0, 0).is_err(), "an all-zero word is not a head");
        assert!(LogWord::Tail.decode(0, LogWord::Head.encode(0, 5)).is_err(), "a head is not a tail");
        assert!(LogWord::Head.decode(1, LogWord::Head.encode(0, 5)).is_err(), "nor another log's head");
    }

    proptest::proptest! {
        #[test]
        fn words_round_trip(seq in 0..=LOG_SEQ_MAX, index in 0u32..64) {
            proptest::prop_assert_eq!(LogWord::Tail.decode(index, LogWord::Tail.encode(index, seq)), Ok(seq));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..40), index in 0u32..4) {
            let geo = Geometry::compute(&crate::FormatConfig::small(4 << 20)).unwrap();
            let _ = LogSuper::decode(&bytes, &geo, index);
        }
    }
}
