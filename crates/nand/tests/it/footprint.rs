//! Metadata-only array state stays within 24 bytes per physical page (16 KiB pages, 4 KiB
//! units), plus a small per-block table.

use nand::store::MetaStore;
use nand::{FlashArray, Geometry};
use sim::ByteSize;

#[test]
fn metadata_only_state_is_at_most_24_bytes_per_page() {
    // 8 GiB raw: 524,288 pages.
    let g = Geometry {
        channels: 8,
        ways: 4,
        dies: 2,
        planes: 2,
        blocks: 32,
        pages: 256,
        page_size: ByteSize::kib(16),
        oob_size: ByteSize(1872),
        mapping_unit: ByteSize::kib(4),
    };
    let a = FlashArray::new(g.clone(), Box::new(MetaStore::new(&g)));
    let per_page = a.resident_bytes() as f64 / g.total_pages() as f64;
    let per_block_overhead = 16.0 / g.pages as f64;
    assert!(per_page <= 24.0 + per_block_overhead + 1e-9, "{per_page} bytes per page");
    assert!(per_page >= 24.0, "{per_page}: the accounting must include units and tags");
}
