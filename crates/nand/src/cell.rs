//! Cell types and page types. A cell storing n bits spreads each word line over n pages
//! (LSB, CSB, MSB, TSB); the higher pages take longer to program and read. ssdlab interleaves
//! page types through a block (`type = page % bits`), which gives the visible LSB/MSB steps of
//! real MLC program latency without a vendor-specific pairing table.

use std::fmt;

use serde::{Deserialize, Serialize};

/// NAND cell technology.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    /// One bit per cell.
    Slc,
    /// Two bits per cell.
    Mlc,
    /// Three bits per cell.
    Tlc,
    /// Four bits per cell.
    Qlc,
}

/// Which bit of the cell a page stores.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PageType {
    /// Lower page (fastest).
    Lsb,
    /// Centre page (TLC, QLC).
    Csb,
    /// Upper page.
    Msb,
    /// Top page (QLC).
    Tsb,
}

impl CellType {
    /// Bits stored per cell (= page types per word line).
    pub fn bits(self) -> usize {
        match self {
            CellType::Slc => 1,
            CellType::Mlc => 2,
            CellType::Tlc => 3,
            CellType::Qlc => 4,
        }
    }

    /// The page types of this cell type, in word-line order.
    pub fn page_types(self) -> &'static [PageType] {
        use PageType::*;
        match self {
            CellType::Slc => &[Lsb],
            CellType::Mlc => &[Lsb, Msb],
            CellType::Tlc => &[Lsb, Csb, Msb],
            CellType::Qlc => &[Lsb, Csb, Msb, Tsb],
        }
    }

    /// The type of page `offset` within a block.
    pub fn page_type(self, offset: u32) -> PageType {
        self.page_types()[offset as usize % self.bits()]
    }

    /// Index of `offset`'s page type in [`CellType::page_types`].
    pub fn page_type_index(self, offset: u32) -> usize {
        offset as usize % self.bits()
    }
}

impl fmt::Display for CellType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CellType::Slc => "slc",
            CellType::Mlc => "mlc",
            CellType::Tlc => "tlc",
            CellType::Qlc => "qlc",
        })
    }
}

impl fmt::Display for PageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PageType::Lsb => "LSB",
            PageType::Csb => "CSB",
            PageType::Msb => "MSB",
            PageType::Tsb => "TSB",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_types_interleave() {
        assert_eq!(CellType::Mlc.page_type(0), PageType::Lsb);
        assert_eq!(CellType::Mlc.page_type(1), PageType::Msb);
        assert_eq!(CellType::Tlc.page_type(5), PageType::Msb);
        assert_eq!(CellType::Qlc.page_type(7), PageType::Tsb);
        assert_eq!(CellType::Slc.page_type(9), PageType::Lsb);
    }
}
