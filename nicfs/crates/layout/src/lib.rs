//! On-PM formats of NICFS.
//!
//! The PM namespace is split into a *public data space* with an Ext2-like layout, which only
//! the back end (and recovery) modifies, and a *log section* of per-process private logs,
//! each written only by its front end:
//!
//! ```text
//! block 0      primary superblock  (static geometry, CRC32)
//! block 1      backup superblock
//! journal      redo journal: header + cache-line records (multi-block atomic updates)
//! ibitmap      inode allocation bitmap
//! bbitmap      data-block allocation bitmap
//! itable       inode table, 128 B inodes (10 direct, 1 indirect, 1 double-indirect, CRC32)
//! data         data, index and directory blocks (directories: 272 B fixed entries with CRC32)
//! log space 0  log super block (static part with CRC32; head, head copy and tail words, each
//!              a 48-bit sequence number with a CRC-16) | header region (64 B headers) |
//!              data region (circular)
//! log space 1  ...
//! ```
//!
//! Every parser here treats its input as untrusted: a bad magic, checksum or out-of-range
//! field becomes a [`LayoutError`], never a panic or an out-of-range access. All integers
//! are little-endian.

mod bitmap;
mod codec;
mod dirent;
mod error;
mod geometry;
mod inode;
mod journal;
mod loghdr;
mod logsuper;
mod types;

pub use bitmap::{bit_get, bit_set};
pub use codec::crc32;
pub use dirent::{DIRENT_SIZE, DIRENTS_PER_BLOCK, Dirent, FileType, NAME_MAX, is_valid_name};
pub use error::LayoutError;
pub use geometry::{FORMAT_VERSION, FormatConfig, Geometry, LogSpaceGeometry, SUPERBLOCK_MAGIC};
pub use inode::mode;
pub use inode::{DIRECT_BLOCKS, INODE_SIZE, Inode, PTRS_PER_BLOCK};
pub use journal::{JOURNAL_RECORD_SIZE, JournalHeader, split_record};
pub use loghdr::{DIR_ENTRY_BLOCKS, LOG_HEADER_SIZE, LogHeader, LogOp, SetAttrMask};
pub use logsuper::{LOG_HEAD_COPY_OFFSET, LOG_HEAD_OFFSET, LOG_SEQ_MAX, LOG_TAIL_OFFSET, LogSuper, LogWord};
pub use types::{BLOCK_SIZE, BlockNo, Ino, ROOT_INO};
