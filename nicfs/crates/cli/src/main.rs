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

use std::process::ExitCode;

use clap::Parser;

/// Runs the command. An error is a user's problem (an image in use, a bad argument, a missing
/// file): it is printed as one line, its causes joined with ": ", and the exit status is 1.
/// Returning it from `main` would print anyhow's `Debug` form instead, which with
/// `RUST_BACKTRACE=1` set appends a stack backtrace (issue 28).
fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nicfs: {e:#}");
            ExitCode::FAILURE
        }
    }
}
