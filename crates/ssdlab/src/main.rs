//! The `ssdlab` command: parse, load the device, run, print.
//!
//! The binary and the library (`lib.rs`) share `src/`. The binary's own modules are the ones
//! declared here: `cli` (the arguments), `commands` (one module per subcommand),
//! `named_device` (the device and page store a command line names), `progress` (the progress
//! bar) and `alloc` (the process's allocator). Everything a command runs — building and
//! measuring systems, `setup`, `serve`, `sweep`, `perfetto` — is the library's, which the
//! commands reach as `ssdlab::`.

mod alloc;
mod cli;
mod commands;
mod named_device;
mod output_paths;
mod progress;

use std::io::Write;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: alloc::Split = alloc::Split;

fn main() {
    // Like other Unix tools, stop quietly when the reader of our output goes away
    // (`ssdlab run | head`) instead of panicking on a broken pipe.
    // SAFETY: called before any other thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = cli::Cli::parse();
    if let Err(e) = commands::dispatch(args) {
        // Nothing left to do if even this cannot be written (standard error closed).
        let _ = writeln!(std::io::stderr(), "ssdlab: {}", ssdlab::message::one_line(e.as_ref()));
        std::process::exit(1);
    }
}
