//! FUSE adapter for NICFS: exposes one front end ([`nicfs_frontend::Client`]) as a mount point, for the
//! POSIX conformance suites (pjdfstest, fsx) and for users who want a directory.
//!
//! FUSE inode numbers are NICFS inode numbers (the root is 1 in both). Permission checks are
//! left to the kernel (`default_permissions`); every update is durable when the reply is
//! sent, so `fsync` and `flush` only succeed. The round trip through the kernel costs far
//! more than a PM write, which is why benchmarks use the library API instead.

mod attr;
mod fs;
mod orphans;

pub use fs::{NicfsFuse, mount};
