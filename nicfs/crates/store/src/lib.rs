//! The public data space of NICFS: an Ext2-like file system engine on emulated PM.
//!
//! Only the back end (the "SmartNIC"), recovery and the in-place baseline modify the public
//! space; front ends read it directly. Every modification is a [`Txn`]:
//!
//! ```text
//!   Txn::begin ──> stage metadata lines (inodes, bitmaps, index blocks, directory slots)
//!        │          write fresh blocks (newly allocated, unreferenced) directly
//!        │          (caller copies file data into place)
//!        └─ commit: fence (direct writes durable first)
//!                   journal records + header (CRC over both)  ── fence  (commit point)
//!                   apply each line home (8-byte atomic stores) ── fence
//! ```
//!
//! Because journal records are physical and the log-head advance of a batch is itself one of
//! the journaled lines, a crash either leaves a batch wholly unapplied (its log entries are
//! replayed) or wholly applied (the journal is re-applied idempotently, the head is past it).
//!
//! Readers go through [`MetaRead`], so the same lookup code ([`read_inode`], [`bmap`],
//! [`dir_lookup`]) serves committed state and a transaction's staged view alike.

mod alloc;
mod dir;
mod error;
mod fasthash;
mod fsck;
mod index;
mod journal;
mod line_cache;
mod logcheck;
mod logspace;
mod mkfs;
mod ops;
mod space;
mod txn;

pub use alloc::Allocator;
pub use dir::{dir_entries, dir_lookup};
pub use error::FsError;
pub use fasthash::{IntBuildHasher, IntHasher, IntMap, IntSet};
pub use fsck::{Fix, FsckReport, fsck, repair};
pub use index::{blocks_to_map, bmap, file_block_count};
pub use journal::{JournalStats, replay_journal, reset_journal};
pub use line_cache::{LineCache, LineCacheStats};
pub use logcheck::{LogCheck, LogFix, check_log, repair_log};
pub use logspace::LogSpace;
pub use mkfs::mkfs;
pub use ops::{WriteChunk, now_ns};
pub use space::{MetaRead, Space, SuperblockCheck, read_inode};
pub use txn::{Engine, Savepoint, Txn};
