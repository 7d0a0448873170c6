//! Benchmarks through the library API (FUSE costs more than PM, so it is not used here).
//!
//! `nicfs bench io` compares, under one PM cost model:
//! * **nicfs**: front ends (one per simulated process, each with its own log) + back end;
//! * **raw**: raw PM, copy + flush + fence per operation (the floor);
//! * **inplace**: an in-place Ext2-style file system on the same PM, no log (the Ext4-DAX
//!   stand-in: data written in place, metadata journaled when size or block map change);
//! * **ext4**: the kernel's ext4 on a RAM-backed loop device (`pwrite` + `fdatasync`), when the
//!   machine allows it.
//!
//! `nicfs bench drain` measures back-end drain throughput with 1, 2 and 4 front ends, and the
//! ablations without the index-block cache and without the pipeline.
//!
//! "Processes" are front ends on separate threads, each with its own log space and client
//! state, exactly as separate processes would have; only the address space is shared.

mod drain;
mod ext4;
mod io;
mod systems;

use anyhow::Result;
use clap::{Args, Subcommand};

/// Arguments of `nicfs bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    kind: Kind,
}

#[derive(Subcommand, Debug)]
enum Kind {
    /// Read/write throughput of nicfs against raw PM, in-place and ext4.
    Io(io::IoArgs),
    /// Back-end drain throughput and ablations.
    Drain(drain::DrainArgs),
}

/// Runs a benchmark.
pub fn run(args: BenchArgs) -> Result<()> {
    match args.kind {
        Kind::Io(a) => io::run(a),
        Kind::Drain(a) => drain::run(a),
    }
}

/// Parses "a,b,c" lists.
pub(crate) fn list<T: std::str::FromStr>(s: &str) -> Result<Vec<T>>
where
    T::Err: std::fmt::Display,
{
    s.split(',')
        .map(|x| x.trim().parse::<T>().map_err(|e| anyhow::anyhow!("bad list item {x:?}: {e}")))
        .collect()
}
