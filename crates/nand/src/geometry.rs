//! The shape of the flash array: channels x ways (chips per channel) x dies x planes x blocks x
//! pages, page and OOB sizes, and the mapping unit packed several to a page.

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::units::ByteSize;

/// Most mapping units one flash page may hold (the OOB keeps one LPN per unit).
pub const MAX_UNITS_PER_PAGE: usize = 16;

/// Flash array geometry, as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    /// Flash channels (independent buses). Required.
    pub channels: u32,
    /// Chips (ways) sharing each channel. Required.
    pub ways: u32,
    /// Dies per chip, each able to run one array operation at a time. Default: 1.
    #[serde(default = "one")]
    pub dies: u32,
    /// Planes per die (multi-plane operations span planes at the same page offset). Default: 1.
    #[serde(default = "one")]
    pub planes: u32,
    /// Erase blocks per plane. Required.
    pub blocks: u32,
    /// Pages per block. Required.
    pub pages: u32,
    /// Data area of a page. Required, e.g. `"16KiB"`.
    pub page_size: ByteSize,
    /// Spare (OOB) area of a page, moved over the channel with the data. Default: `0B`.
    #[serde(default)]
    pub oob_size: ByteSize,
    /// Mapping unit (logical sector) size; a page holds `page_size / mapping_unit` units.
    /// Default: `4KiB`.
    #[serde(default = "default_unit")]
    pub mapping_unit: ByteSize,
}

fn one() -> u32 {
    1
}

fn default_unit() -> ByteSize {
    ByteSize::kib(4)
}

impl Geometry {
    /// Checks every field and combination; the error names the first bad field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (name, v) in [
            ("channels", self.channels),
            ("ways", self.ways),
            ("dies", self.dies),
            ("planes", self.planes),
            ("blocks", self.blocks),
            ("pages", self.pages),
        ] {
            ensure(v >= 1, name, || format!("must be at least 1 (got {v})"))?;
        }
        ensure(self.channels <= 1024, "channels", || format!("at most 1024 (got {})", self.channels))?;
        ensure(self.ways <= 256, "ways", || format!("at most 256 (got {})", self.ways))?;
        ensure(self.dies <= 16, "dies", || format!("at most 16 per chip (got {})", self.dies))?;
        ensure(self.planes <= 8, "planes", || format!("at most 8 per die (got {})", self.planes))?;
        ensure(self.pages <= 65_536, "pages", || format!("at most 65536 per block (got {})", self.pages))?;
        let unit = self.mapping_unit.bytes();
        let page = self.page_size.bytes();
        ensure(unit >= 512 && unit.is_power_of_two(), "mapping_unit", || {
            format!("must be a power of two of at least 512B (got {})", self.mapping_unit)
        })?;
        ensure(page >= unit && page.is_multiple_of(unit), "page_size", || {
            format!("must be a multiple of mapping_unit {} (got {})", self.mapping_unit, self.page_size)
        })?;
        ensure(page <= 1 << 20, "page_size", || format!("at most 1MiB (got {})", self.page_size))?;
        let upp = page / unit;
        ensure(upp as usize <= MAX_UNITS_PER_PAGE, "mapping_unit", || {
            format!("a page may hold at most {MAX_UNITS_PER_PAGE} units (page_size / mapping_unit = {upp})")
        })?;
        ensure(self.oob_size.bytes() <= page, "oob_size", || {
            format!("larger than the page ({} > {})", self.oob_size, self.page_size)
        })?;
        let units = self.total_pages_u64() * upp;
        ensure(units < 1 << 32, "blocks", || {
            format!(
                "the array has {units} mapping units; at most 2^32 are addressable (fewer blocks or a larger mapping_unit)"
            )
        })?;
        Ok(())
    }

    fn total_pages_u64(&self) -> u64 {
        [self.channels, self.ways, self.dies, self.planes, self.blocks, self.pages]
            .iter()
            .map(|&v| v as u64)
            .product()
    }

    /// Chips (channel x way).
    pub fn chips(&self) -> u32 {
        self.channels * self.ways
    }
    /// Dies in the whole array.
    pub fn total_dies(&self) -> u32 {
        self.chips() * self.dies
    }
    /// Dies on one channel.
    pub fn dies_per_channel(&self) -> u32 {
        self.ways * self.dies
    }
    /// Blocks in one die (all planes).
    pub fn blocks_per_die(&self) -> u32 {
        self.planes * self.blocks
    }
    /// Blocks in the whole array.
    pub fn total_blocks(&self) -> u32 {
        self.total_dies() * self.blocks_per_die()
    }
    /// Pages in the whole array.
    pub fn total_pages(&self) -> u32 {
        self.total_blocks() * self.pages
    }
    /// Mapping units per page.
    pub fn units_per_page(&self) -> u32 {
        (self.page_size.bytes() / self.mapping_unit.bytes()) as u32
    }
    /// Mapping units per block.
    pub fn units_per_block(&self) -> u32 {
        self.pages * self.units_per_page()
    }
    /// Mapping units in the whole array.
    pub fn total_units(&self) -> u32 {
        self.total_pages() * self.units_per_page()
    }
    /// Raw capacity (data areas only).
    pub fn capacity(&self) -> ByteSize {
        ByteSize(self.total_pages_u64() * self.page_size.bytes())
    }
    /// Page data bytes.
    pub fn page_bytes(&self) -> u32 {
        self.page_size.bytes() as u32
    }
    /// Mapping unit bytes.
    pub fn unit_bytes(&self) -> u32 {
        self.mapping_unit.bytes() as u32
    }
}

#[cfg(test)]
pub(crate) fn tiny() -> Geometry {
    Geometry {
        channels: 2,
        ways: 2,
        dies: 2,
        planes: 2,
        blocks: 8,
        pages: 16,
        page_size: ByteSize::kib(16),
        oob_size: ByteSize(1872),
        mapping_unit: ByteSize::kib(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_counts() {
        let g = tiny();
        g.validate().unwrap();
        assert_eq!(g.total_dies(), 8);
        assert_eq!(g.total_blocks(), 128);
        assert_eq!(g.total_pages(), 2048);
        assert_eq!(g.units_per_page(), 4);
        assert_eq!(g.total_units(), 8192);
        assert_eq!(g.capacity(), ByteSize::mib(32));
    }

    #[test]
    fn validation_names_the_bad_field() {
        let cases: Vec<(fn(&mut Geometry), &str)> = vec![
            (|g| g.channels = 0, "channels: must be at least 1 (got 0)"),
            (|g| g.planes = 9, "planes: at most 8 per die (got 9)"),
            (
                |g| g.page_size = ByteSize(10_000),
                "page_size: must be a multiple of mapping_unit 4KiB (got 10000B)",
            ),
            (
                |g| g.mapping_unit = ByteSize(3000),
                "mapping_unit: must be a power of two of at least 512B (got 3000B)",
            ),
            (
                |g| g.mapping_unit = ByteSize(512),
                "mapping_unit: a page may hold at most 16 units (page_size / mapping_unit = 32)",
            ),
            (|g| g.oob_size = ByteSize::kib(32), "oob_size: larger than the page (32KiB > 16KiB)"),
            (|g| g.blocks = 1 << 24, "blocks: the array has"),
        ];
        for (mutate, want) in cases {
            let mut g = tiny();
            mutate(&mut g);
            let err = g.validate().unwrap_err().to_string();
            assert!(err.starts_with(want), "got {err:?}, want {want:?}");
        }
    }

    #[test]
    fn unknown_fields_are_rejected_by_name() {
        let err =
            toml::from_str::<Geometry>("channels=1\nways=1\nblocks=1\npages=1\npage_size='4KiB'\nchanels=2")
                .unwrap_err()
                .to_string();
        assert!(err.contains("unknown field `chanels`"), "{err}");
    }
}
