//! Superblock parser: arbitrary bytes must give a geometry or an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((geo, uuid)) = nicfs_layout::Geometry::decode_superblock(data) {
        // Whatever decodes must re-encode to a superblock that decodes the same.
        let again = nicfs_layout::Geometry::decode_superblock(&geo.encode_superblock(uuid)).unwrap();
        assert_eq!(again, (geo, uuid));
    }
});
