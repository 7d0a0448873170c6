//! Log super-block parser (static part, head and tail words).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let geo = nicfs_layout::Geometry::compute(&nicfs_layout::FormatConfig::small(4 << 20)).unwrap();
    let index = data.first().copied().unwrap_or(0) as u32 % geo.log_spaces;
    let _ = nicfs_layout::LogSuper::decode(data.get(1..).unwrap_or(&[]), &geo, index);
    if let Some(w) = data.get(1..9) {
        let word = u64::from_le_bytes(w.try_into().unwrap());
        let _ = nicfs_layout::LogWord::Head.decode(index, word);
        let _ = nicfs_layout::LogWord::Tail.decode(index, word);
    }
});
