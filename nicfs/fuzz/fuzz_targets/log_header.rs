//! Log-header parser and its geometry validation.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = nicfs_layout::LogHeader::decode(data) {
        let geo = nicfs_layout::Geometry::compute(&nicfs_layout::FormatConfig::small(4 << 20)).unwrap();
        let _ = h.validate(&geo);
        assert_eq!(nicfs_layout::LogHeader::decode(&h.encode()).unwrap(), h);
    }
});
