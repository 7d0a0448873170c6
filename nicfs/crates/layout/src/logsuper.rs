//! Log super blocks: the static description of a log space plus its head and tail words.
//!
//! Head and tail are sequence numbers of log headers (monotonic `u64`), each in its own cache
//! line and only ever written with one atomic 8-byte store: the front end owns the tail (an
//! append is committed by advancing it), the back end owns the head (advanced only after the
//! batch it covers is durable in the public space, as part of that batch's journal commit).

use crate::codec::{check_crc, crc32, get_u32, get_u64, need, put_u32, put_u64};
use crate::{Geometry, LayoutError};

/// Byte offset of the head word within the log super block.
pub const LOG_HEAD_OFFSET: u64 = 64;
/// Byte offset of the tail word within the log super block.
pub const LOG_TAIL_OFFSET: u64 = 128;
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

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..40), index in 0u32..4) {
            let geo = Geometry::compute(&crate::FormatConfig::small(4 << 20)).unwrap();
            let _ = LogSuper::decode(&bytes, &geo, index);
        }
    }
}
