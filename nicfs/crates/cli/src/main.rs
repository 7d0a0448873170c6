//! `nicfs`: format, serve, mount, check and measure a NICFS file system.
//!
//! ```text
//! nicfs mkfs   --pm /dev/shm/nicfs --size 1GiB      create and format the PM file
//! nicfs daemon --pm /dev/shm/nicfs                  run the back end (recovers first)
//! nicfs mount  --pm /dev/shm/nicfs /mnt/nicfs       FUSE mount (front end; --with-daemon)
//! nicfs fsck   --pm /dev/shm/nicfs [--repair]       check (and repair) the image
//! nicfs stat   --pm /dev/shm/nicfs                  geometry, logs, usage
//! nicfs crashcheck | mpcheck | bench                checkers and benchmarks
//! nicfs figure paper                               the paper's figures, in virtual time
//! ```

mod bench;
mod cmd;
mod figure;
mod fsck;
mod mp;

use anyhow::Result;
use clap::Parser;

fn main() -> Result<()> {
    let cli = cmd::Cli::parse();
    cmd::run(cli)
}
