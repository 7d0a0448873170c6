//! The redo journal: atomic, idempotent multi-block metadata updates.
//!
//! A transaction is a list of whole cache lines (address + 64 new bytes). Commit writes the
//! records and a header whose CRC32 covers header and records, then one fence: a torn commit
//! fails its checksum and counts as never committed. Applying copies each line home; because
//! records are physical (absolute contents), applying twice is the same as applying once.

use crate::codec::{get_u32, get_u64, need, put_u32, put_u64};
use crate::{BLOCK_SIZE, LayoutError};

/// Bytes per journal record: 8-byte PM address + one 64-byte cache line.
pub const JOURNAL_RECORD_SIZE: usize = 72;
const MAGIC: u64 = u64::from_le_bytes(*b"NICFSJNL");
const WHAT: &str = "journal header";
/// Encoded header length.
const HDR_LEN: usize = 28;

/// The journal header (first bytes of the first journal block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalHeader {
    /// Transaction sequence number.
    pub seq: u64,
    /// Number of records.
    pub nrec: u32,
    /// Whether the transaction is committed and not yet known to be applied.
    pub committed: bool,
}

impl JournalHeader {
    /// Records that fit in a journal of `blocks` blocks (the first holds the header).
    pub fn capacity(blocks: u32) -> u32 {
        ((blocks.saturating_sub(1)) as u64 * BLOCK_SIZE / JOURNAL_RECORD_SIZE as u64) as u32
    }

    /// Encodes the header; the CRC32 covers the header fields and `records`.
    pub fn encode(&self, records: &[u8]) -> [u8; HDR_LEN] {
        let mut b = [0u8; HDR_LEN];
        put_u64(&mut b, 0, MAGIC);
        put_u64(&mut b, 8, self.seq);
        put_u32(&mut b, 16, self.nrec);
        put_u32(&mut b, 20, self.committed as u32);
        let mut h = crc32fast::Hasher::new();
        h.update(&b[..24]);
        h.update(records);
        put_u32(&mut b, 24, h.finalize());
        b
    }

    /// Decodes the header fields. The caller then reads `nrec` records and checks them with
    /// [`verify`](Self::verify). A zeroed header (fresh file system) decodes as "empty".
    pub fn decode(b: &[u8], journal_blocks: u32) -> Result<JournalHeader, LayoutError> {
        need(WHAT, b, HDR_LEN)?;
        if b[..HDR_LEN].iter().all(|&x| x == 0) {
            return Ok(JournalHeader { seq: 0, nrec: 0, committed: false });
        }
        let magic = get_u64(b, 0);
        if magic != MAGIC {
            return Err(LayoutError::BadMagic { what: WHAT, found: magic });
        }
        let nrec = get_u32(b, 16);
        if nrec > Self::capacity(journal_blocks) {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "nrec", value: nrec as u64 });
        }
        let state = get_u32(b, 20);
        if state > 1 {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "state", value: state as u64 });
        }
        Ok(JournalHeader { seq: get_u64(b, 8), nrec, committed: state == 1 })
    }

    /// Checks the CRC over header `b` and `records` (a torn commit fails here).
    pub fn verify(b: &[u8], records: &[u8]) -> Result<(), LayoutError> {
        need(WHAT, b, HDR_LEN)?;
        let mut h = crc32fast::Hasher::new();
        h.update(&b[..24]);
        h.update(records);
        let computed = h.finalize();
        let stored = get_u32(b, 24);
        if stored != computed {
            return Err(LayoutError::BadChecksum { what: WHAT, stored, computed });
        }
        Ok(())
    }
}

/// Splits a record into its target address and line contents.
pub fn split_record(r: &[u8]) -> (u64, &[u8]) {
    (get_u64(r, 0), &r[8..JOURNAL_RECORD_SIZE])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_round_trip_and_torn_records_detected() {
        let recs = vec![7u8; 2 * JOURNAL_RECORD_SIZE];
        let h = JournalHeader { seq: 3, nrec: 2, committed: true };
        let b = h.encode(&recs);
        assert_eq!(JournalHeader::decode(&b, 16).unwrap(), h);
        JournalHeader::verify(&b, &recs).unwrap();
        let mut torn = recs.clone();
        torn[100] = 0;
        assert!(JournalHeader::verify(&b, &torn).is_err());
        assert!(!JournalHeader::decode(&[0u8; 28], 16).unwrap().committed);
        let big = JournalHeader { seq: 1, nrec: 10_000, committed: true }.encode(&[]);
        assert!(JournalHeader::decode(&big, 16).is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_headers_and_records_never_panic(
            hdr in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
            recs in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
        ) {
            if let Ok(h) = JournalHeader::decode(&hdr, 16) {
                proptest::prop_assert!(h.nrec <= JournalHeader::capacity(16));
            }
            let _ = JournalHeader::verify(&hdr, &recs);
        }
    }
}
