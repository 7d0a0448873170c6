//! Typed PM addresses.

use std::fmt;

/// Size of one CPU cache line, the unit of write-back and of crash atomicity, in bytes.
pub const CACHE_LINE: u64 = 64;

/// A byte offset inside the PM namespace.
///
/// Addresses are never bare integers in NICFS: everything that points into PM is a `PmAddr`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PmAddr(pub u64);

impl PmAddr {
    /// The raw offset in bytes.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The address `bytes` further on.
    pub const fn add(self, bytes: u64) -> PmAddr {
        PmAddr(self.0 + bytes)
    }

    /// The cache-line index this address falls in.
    pub const fn line(self) -> u64 {
        self.0 / CACHE_LINE
    }

    /// Whether the address is aligned to `align` bytes.
    pub const fn is_aligned(self, align: u64) -> bool {
        self.0.is_multiple_of(align)
    }
}

impl fmt::Display for PmAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pm+{:#x}", self.0)
    }
}
