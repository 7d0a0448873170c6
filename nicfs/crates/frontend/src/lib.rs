//! The NICFS front end: a library linked into every process that uses the file system.
//!
//! Every update is appended to the process's private log on PM and is durable when the call
//! returns; the back end applies logs to the public space later. Reads combine the public
//! space with the process's own not-yet-applied updates:
//!
//! ```text
//!  write(fd, buf) ──> LogWriter::append: payload (nt-store) → header (store+flush) → fence
//!                                        → tail (atomic 8-byte store) → fence  = durable
//!                 └─> per-block update list: (seq, offset in block, len, PM address of bytes)
//!
//!  read(fd, buf)  ──> public block (under the inode's seqlock)
//!                     + replay of this process's updates with seq >= log head
//! ```
//!
//! Caches (all per process, valid only while the matching lease is held):
//! * the **inode cache**, a hash table of logical inode views;
//! * **directory views** (name → inode) rebuilt from the public space plus pending updates;
//! * **per-block update lists** pointing into log data.
//!
//! Leases: every operation holds a read or write lease on the inodes it touches (requested
//! from the back end over the comm channel). When a lease is lost and granted again, the
//! views of that inode are rebuilt. When the log is full, `append` asks the back end to
//! drain and waits (back-pressure) instead of failing.

mod channel;
mod client;
mod config;
mod fs;
mod logwriter;
mod nsops;
mod stat;
mod statfs;
mod updates;
mod views;

pub use channel::{Link, RingLink, check};
pub use client::Client;
pub use config::{FrontendConfig, FrontendConfigError};
pub use fs::{Fd, Fs, OpenFlags};
pub use nicfs_store::FsError;
pub use stat::{DirEntry, Stat};
pub use statfs::StatFs;
