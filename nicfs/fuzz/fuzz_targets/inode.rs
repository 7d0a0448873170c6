//! Inode parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(i) = nicfs_layout::Inode::decode(data) {
        if i != nicfs_layout::Inode::default() {
            assert_eq!(nicfs_layout::Inode::decode(&i.encode()).unwrap(), i);
        }
    }
});
