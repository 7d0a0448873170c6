//! Directory-entry parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(d)) = nicfs_layout::Dirent::decode(data) {
        assert!(nicfs_layout::is_valid_name(&d.name));
        assert_eq!(nicfs_layout::Dirent::decode(&d.encode()).unwrap(), Some(d));
    }
});
