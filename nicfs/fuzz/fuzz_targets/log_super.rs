//! Log super-block parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let geo = nicfs_layout::Geometry::compute(&nicfs_layout::FormatConfig::small(4 << 20)).unwrap();
    let index = data.first().copied().unwrap_or(0) as u32 % geo.log_spaces;
    let _ = nicfs_layout::LogSuper::decode(data.get(1..).unwrap_or(&[]), &geo, index);
});
