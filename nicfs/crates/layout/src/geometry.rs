//! Format configuration, derived geometry, and the superblock that records it.

use serde::{Deserialize, Serialize};

use crate::codec::{check_crc, crc32, get_u32, get_u64, need, put_u32, put_u64};
use crate::{BLOCK_SIZE, BlockNo, INODE_SIZE, LOG_HEADER_SIZE, LayoutError};

/// Magic number of the superblock ("NICFS01\0").
pub const SUPERBLOCK_MAGIC: u64 = u64::from_le_bytes(*b"NICFS01\0");
/// The on-PM format this build reads and writes. Format 3 (issue 28) added a check to the log
/// head and tail words and a copy of the head ([`crate::LogWord`]); format 2 (issue 18) added
/// checksums to directory entries and the block reservation of write records. Older images are
/// refused with [`LayoutError::Version`].
pub const FORMAT_VERSION: u32 = 3;
const SB_LEN: usize = 96;
const SB_CRC_AT: usize = 92;

/// What `mkfs` is asked to build. Every field's doc ends with its default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FormatConfig {
    /// Size of the PM namespace in bytes; a multiple of 4096. Default: 1 GiB.
    pub size_bytes: u64,
    /// Number of inodes; a multiple of 32, at least 32. Default: 65536.
    pub inodes: u32,
    /// Number of private log spaces (= maximum concurrent front ends), 1..=64. Default: 8.
    pub log_spaces: u32,
    /// Log headers per log space; a multiple of 64, at least 64. Default: 16384.
    pub log_headers: u32,
    /// Bytes of log data per log space; a multiple of 4096, at least 64 KiB. Default: 32 MiB.
    pub log_data_bytes: u64,
    /// Blocks of redo journal, at least 4. Default: 256 (1 MiB).
    pub journal_blocks: u32,
}

impl Default for FormatConfig {
    fn default() -> Self {
        FormatConfig {
            size_bytes: 1 << 30,
            inodes: 65536,
            log_spaces: 8,
            log_headers: 16384,
            log_data_bytes: 32 << 20,
            journal_blocks: 256,
        }
    }
}

impl FormatConfig {
    /// A configuration scaled to `size_bytes`: 8 log spaces together taking about a quarter
    /// of the space (64 KiB..32 MiB each), one inode per 16 KiB (1024..65536).
    pub fn for_size(size_bytes: u64) -> FormatConfig {
        let size_bytes = size_bytes / BLOCK_SIZE * BLOCK_SIZE;
        let log_data_bytes = (size_bytes / 32 / BLOCK_SIZE * BLOCK_SIZE).clamp(64 << 10, 32 << 20);
        let log_headers = ((log_data_bytes / BLOCK_SIZE * 4) as u32 / 64 * 64).clamp(64, 16384);
        let inodes = ((size_bytes / (16 << 10)) as u32 / 32 * 32).clamp(1024, 65536);
        let journal_blocks = ((size_bytes / BLOCK_SIZE / 256) as u32).clamp(16, 256);
        FormatConfig { size_bytes, inodes, log_spaces: 8, log_headers, log_data_bytes, journal_blocks }
    }

    /// A small configuration for tests: `size_bytes` of PM, 2 log spaces of 256 KiB.
    pub fn small(size_bytes: u64) -> FormatConfig {
        FormatConfig {
            size_bytes,
            inodes: 256,
            log_spaces: 2,
            log_headers: 256,
            log_data_bytes: 256 << 10,
            journal_blocks: 16,
        }
    }
}

/// Placement of one private log space.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LogSpaceGeometry {
    /// The log super block (head, tail, static description).
    pub super_block: BlockNo,
    /// First block of the header region.
    pub headers_start: BlockNo,
    /// Number of 64-byte headers.
    pub headers: u32,
    /// First block of the data region.
    pub data_start: BlockNo,
    /// Bytes in the data region.
    pub data_bytes: u64,
}

/// Where everything is, derived from a [`FormatConfig`] and stored in the superblock.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Blocks in the namespace.
    pub total_blocks: u32,
    /// Inodes in the inode table.
    pub inode_count: u32,
    /// First journal block.
    pub journal_start: u32,
    /// Journal blocks.
    pub journal_blocks: u32,
    /// First inode-bitmap block.
    pub ibitmap_start: u32,
    /// Inode-bitmap blocks.
    pub ibitmap_blocks: u32,
    /// First block-bitmap block.
    pub bbitmap_start: u32,
    /// Block-bitmap blocks.
    pub bbitmap_blocks: u32,
    /// First inode-table block.
    pub itable_start: u32,
    /// Inode-table blocks.
    pub itable_blocks: u32,
    /// First data block.
    pub data_start: u32,
    /// Data blocks (bit `i` of the block bitmap is block `data_start + i`).
    pub data_blocks: u32,
    /// First block of the log section.
    pub log_start: u32,
    /// Number of log spaces.
    pub log_spaces: u32,
    /// Headers per log space.
    pub log_headers: u32,
    /// Data blocks per log space.
    pub log_data_blocks: u32,
    /// Blocks per log space (super + headers + data).
    pub log_space_blocks: u32,
}

fn bad(field: &'static str, reason: impl Into<String>) -> LayoutError {
    LayoutError::BadConfig { field, reason: reason.into() }
}

fn div_ceil(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

impl Geometry {
    /// Validates `cfg` and derives the geometry.
    pub fn compute(cfg: &FormatConfig) -> Result<Geometry, LayoutError> {
        if !cfg.size_bytes.is_multiple_of(BLOCK_SIZE) || cfg.size_bytes / BLOCK_SIZE > u32::MAX as u64 {
            return Err(bad("size_bytes", "must be a multiple of 4096 below 16 TiB"));
        }
        if cfg.inodes < 32 || !cfg.inodes.is_multiple_of(32) {
            return Err(bad("inodes", "must be a non-zero multiple of 32"));
        }
        if !(1..=64).contains(&cfg.log_spaces) {
            return Err(bad("log_spaces", "must be in 1..=64"));
        }
        if cfg.log_headers < 64 || !cfg.log_headers.is_multiple_of(64) {
            return Err(bad("log_headers", "must be a non-zero multiple of 64"));
        }
        if cfg.log_data_bytes < (64 << 10) || !cfg.log_data_bytes.is_multiple_of(BLOCK_SIZE) {
            return Err(bad("log_data_bytes", "must be a multiple of 4096, at least 64 KiB"));
        }
        if cfg.journal_blocks < 4 {
            return Err(bad("journal_blocks", "must be at least 4"));
        }
        let total = cfg.size_bytes / BLOCK_SIZE;
        let journal_start = 2u64;
        let ibitmap_start = journal_start + cfg.journal_blocks as u64;
        let ibitmap_blocks = div_ceil(cfg.inodes as u64, BLOCK_SIZE * 8);
        let bbitmap_start = ibitmap_start + ibitmap_blocks;
        let header_blocks = cfg.log_headers as u64 * LOG_HEADER_SIZE as u64 / BLOCK_SIZE;
        let log_data_blocks = cfg.log_data_bytes / BLOCK_SIZE;
        let log_space_blocks = 1 + header_blocks + log_data_blocks;
        let log_total = log_space_blocks * cfg.log_spaces as u64;
        let itable_blocks = cfg.inodes as u64 * INODE_SIZE as u64 / BLOCK_SIZE;
        // Remaining blocks hold the block bitmap and the data region.
        let fixed = bbitmap_start + itable_blocks + log_total;
        if fixed + 16 + 1 > total {
            return Err(bad(
                "size_bytes",
                format!("too small: metadata and logs need {} blocks", fixed + 17),
            ));
        }
        let rest = total - fixed;
        let bbitmap_blocks = div_ceil(rest, BLOCK_SIZE * 8 + 1);
        let itable_start = bbitmap_start + bbitmap_blocks;
        let data_start = itable_start + itable_blocks;
        let data_blocks = rest - bbitmap_blocks;
        let log_start = data_start + data_blocks;
        if data_blocks < 16 {
            return Err(bad("size_bytes", "leaves fewer than 16 data blocks"));
        }
        Ok(Geometry {
            total_blocks: total as u32,
            inode_count: cfg.inodes,
            journal_start: journal_start as u32,
            journal_blocks: cfg.journal_blocks,
            ibitmap_start: ibitmap_start as u32,
            ibitmap_blocks: ibitmap_blocks as u32,
            bbitmap_start: bbitmap_start as u32,
            bbitmap_blocks: bbitmap_blocks as u32,
            itable_start: itable_start as u32,
            itable_blocks: itable_blocks as u32,
            data_start: data_start as u32,
            data_blocks: data_blocks as u32,
            log_start: log_start as u32,
            log_spaces: cfg.log_spaces,
            log_headers: cfg.log_headers,
            log_data_blocks: log_data_blocks as u32,
            log_space_blocks: log_space_blocks as u32,
        })
    }

    /// The configuration this geometry was derived from.
    pub fn config(&self) -> FormatConfig {
        FormatConfig {
            size_bytes: self.total_blocks as u64 * BLOCK_SIZE,
            inodes: self.inode_count,
            log_spaces: self.log_spaces,
            log_headers: self.log_headers,
            log_data_bytes: self.log_data_blocks as u64 * BLOCK_SIZE,
            journal_blocks: self.journal_blocks,
        }
    }

    /// Placement of log space `i` (`i < log_spaces`).
    pub fn log_space(&self, i: u32) -> LogSpaceGeometry {
        let start = self.log_start + i * self.log_space_blocks;
        let header_blocks = self.log_headers * LOG_HEADER_SIZE as u32 / BLOCK_SIZE as u32;
        LogSpaceGeometry {
            super_block: BlockNo(start),
            headers_start: BlockNo(start + 1),
            headers: self.log_headers,
            data_start: BlockNo(start + 1 + header_blocks),
            data_bytes: self.log_data_blocks as u64 * BLOCK_SIZE,
        }
    }

    /// Whether `b` is a data-region block (the only blocks files may point to).
    pub fn is_data_block(&self, b: BlockNo) -> bool {
        b.0 >= self.data_start && b.0 < self.data_start + self.data_blocks
    }

    /// Whether `ino` is a valid inode number (1..=inode_count-1; inode 0 is unused).
    pub fn is_valid_ino(&self, ino: crate::Ino) -> bool {
        ino.0 >= 1 && ino.0 < self.inode_count
    }

    /// Encodes the superblock (96 bytes; CRC32 at byte 92).
    pub fn encode_superblock(&self, uuid: u64) -> [u8; SB_LEN] {
        let mut b = [0u8; SB_LEN];
        put_u64(&mut b, 0, SUPERBLOCK_MAGIC);
        put_u32(&mut b, 8, FORMAT_VERSION);
        put_u32(&mut b, 12, BLOCK_SIZE as u32);
        let fields = self.fields();
        for (i, (_, v)) in fields.iter().enumerate() {
            put_u32(&mut b, 16 + 4 * i, *v);
        }
        put_u64(&mut b, 84, uuid);
        let crc = crc32(&b[..SB_CRC_AT]);
        put_u32(&mut b, SB_CRC_AT, crc);
        b
    }

    fn fields(&self) -> [(&'static str, u32); 17] {
        [
            ("total_blocks", self.total_blocks),
            ("inode_count", self.inode_count),
            ("journal_start", self.journal_start),
            ("journal_blocks", self.journal_blocks),
            ("ibitmap_start", self.ibitmap_start),
            ("ibitmap_blocks", self.ibitmap_blocks),
            ("bbitmap_start", self.bbitmap_start),
            ("bbitmap_blocks", self.bbitmap_blocks),
            ("itable_start", self.itable_start),
            ("itable_blocks", self.itable_blocks),
            ("data_start", self.data_start),
            ("data_blocks", self.data_blocks),
            ("log_start", self.log_start),
            ("log_spaces", self.log_spaces),
            ("log_headers", self.log_headers),
            ("log_data_blocks", self.log_data_blocks),
            ("log_space_blocks", self.log_space_blocks),
        ]
    }

    /// Decodes and fully validates a superblock: magic, version, checksum, and every field
    /// against the geometry its own configuration derives. Returns the geometry and uuid.
    pub fn decode_superblock(b: &[u8]) -> Result<(Geometry, u64), LayoutError> {
        const WHAT: &str = "superblock";
        need(WHAT, b, SB_LEN)?;
        let magic = get_u64(b, 0);
        if magic != SUPERBLOCK_MAGIC {
            return Err(LayoutError::BadMagic { what: WHAT, found: magic });
        }
        check_crc(WHAT, b, SB_CRC_AT)?;
        let version = get_u32(b, 8);
        if version != FORMAT_VERSION {
            return Err(LayoutError::Version { found: version, supported: FORMAT_VERSION });
        }
        let bs = get_u32(b, 12);
        if bs as u64 != BLOCK_SIZE {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "block_size", value: bs as u64 });
        }
        let f = |i: usize| get_u32(b, 16 + 4 * i);
        let cfg = FormatConfig {
            size_bytes: f(0) as u64 * BLOCK_SIZE,
            inodes: f(1),
            journal_blocks: f(3),
            log_spaces: f(13),
            log_headers: f(14),
            log_data_bytes: f(15) as u64 * BLOCK_SIZE,
        };
        let geo = Geometry::compute(&cfg).map_err(|e| match e {
            LayoutError::BadConfig { field, .. } => LayoutError::OutOfRange { what: WHAT, field, value: 0 },
            other => other,
        })?;
        for (i, (name, v)) in geo.fields().iter().enumerate() {
            if f(i) != *v {
                return Err(LayoutError::OutOfRange { what: WHAT, field: name, value: f(i) as u64 });
            }
        }
        Ok((geo, get_u64(b, 84)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_small_configs_are_valid_and_regions_do_not_overlap() {
        for cfg in [
            FormatConfig::default(),
            FormatConfig::small(4 << 20),
            FormatConfig::for_size(64 << 20),
            FormatConfig::for_size(256 << 20),
            FormatConfig::for_size(8 << 30),
        ] {
            let g = Geometry::compute(&cfg).unwrap();
            assert!(g.ibitmap_start >= g.journal_start + g.journal_blocks);
            assert!(g.bbitmap_start >= g.ibitmap_start + g.ibitmap_blocks);
            assert!(g.itable_start >= g.bbitmap_start + g.bbitmap_blocks);
            assert!(g.data_start >= g.itable_start + g.itable_blocks);
            assert!(g.bbitmap_blocks as u64 * BLOCK_SIZE * 8 >= g.data_blocks as u64);
            assert_eq!(g.log_start + g.log_spaces * g.log_space_blocks, g.total_blocks);
            assert_eq!(g.config(), cfg);
        }
    }

    #[test]
    fn superblock_round_trips_and_detects_corruption() {
        let g = Geometry::compute(&FormatConfig::small(4 << 20)).unwrap();
        let mut sb = g.encode_superblock(7);
        assert_eq!(Geometry::decode_superblock(&sb).unwrap(), (g, 7));
        sb[20] ^= 1;
        assert!(matches!(Geometry::decode_superblock(&sb), Err(LayoutError::BadChecksum { .. })));
        assert!(matches!(Geometry::decode_superblock(&[0u8; 10]), Err(LayoutError::Truncated { .. })));
    }

    #[test]
    fn an_older_format_is_refused_with_a_clear_error() {
        let g = Geometry::compute(&FormatConfig::small(4 << 20)).unwrap();
        let mut sb = g.encode_superblock(7);
        put_u32(&mut sb, 8, 1);
        let crc = crc32(&sb[..SB_CRC_AT]);
        put_u32(&mut sb, SB_CRC_AT, crc);
        let e = Geometry::decode_superblock(&sb).unwrap_err();
        assert_eq!(e, LayoutError::Version { found: 1, supported: FORMAT_VERSION });
        assert!(e.to_string().contains("format 1"), "{e}");
        put_u32(&mut sb, 8, 2);
        let crc = crc32(&sb[..SB_CRC_AT]);
        put_u32(&mut sb, SB_CRC_AT, crc);
        let e = Geometry::decode_superblock(&sb).unwrap_err();
        assert!(e.to_string().contains("format 2, this build reads format 3"), "{e}");
    }

    #[test]
    fn bad_config_names_the_field() {
        let cfg = FormatConfig { inodes: 33, ..FormatConfig::small(4 << 20) };
        assert!(matches!(Geometry::compute(&cfg), Err(LayoutError::BadConfig { field: "inodes", .. })));
        let cfg = FormatConfig::small(64 << 10);
        assert!(matches!(Geometry::compute(&cfg), Err(LayoutError::BadConfig { field: "size_bytes", .. })));
        let cfg: FormatConfig = toml::from_str("log_spaces = 4").unwrap();
        assert_eq!(cfg.log_spaces, 4);
    }

    proptest::proptest! {
        #[test]
        fn decode_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..128)) {
            let _ = Geometry::decode_superblock(&bytes);
        }

        #[test]
        fn decode_rejects_any_single_bit_flip(bit in 0usize..(96 * 8)) {
            let g = Geometry::compute(&FormatConfig::small(4 << 20)).unwrap();
            let mut sb = g.encode_superblock(1);
            sb[bit / 8] ^= 1 << (bit % 8);
            proptest::prop_assert!(Geometry::decode_superblock(&sb).is_err());
        }
    }
}
