//! Comm-ring message decoder (the ring is shared with other processes).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 64 {
        return;
    }
    let mut w = [0u64; 8];
    for (i, x) in w.iter_mut().enumerate() {
        *x = u64::from_le_bytes(data[i * 8..i * 8 + 8].try_into().unwrap());
    }
    if let Some(m) = nicfs_comm::Msg::decode(&w) {
        assert_eq!(nicfs_comm::Msg::decode(&m.encode()), Some(m));
    }
});
