//! Domain types: block numbers and inode numbers.

use std::fmt;

/// Size of a file-system block in bytes (also the page size of the emulated devdax map).
pub const BLOCK_SIZE: u64 = 4096;

/// A block number in the PM namespace (block `n` starts at byte `n * BLOCK_SIZE`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockNo(pub u32);

impl BlockNo {
    /// Byte offset of the block's first byte.
    pub const fn byte_offset(self) -> u64 {
        self.0 as u64 * BLOCK_SIZE
    }

    /// Whether this is the "no block" marker (0; block 0 holds the superblock).
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for BlockNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {}", self.0)
    }
}

/// An inode number; 0 means "none", the root directory is [`ROOT_INO`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ino(pub u32);

/// The root directory's inode number.
pub const ROOT_INO: Ino = Ino(1);

impl Ino {
    /// Whether this is the "no inode" marker.
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Ino {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "inode {}", self.0)
    }
}
