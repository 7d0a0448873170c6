//! Journal header parser and checksum verification.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 28 {
        return;
    }
    let (hdr, recs) = data.split_at(28);
    if let Ok(h) = nicfs_layout::JournalHeader::decode(hdr, 16) {
        let _ = nicfs_layout::JournalHeader::verify(hdr, recs);
        assert!(h.nrec <= nicfs_layout::JournalHeader::capacity(16));
    }
});
