//! The `ssdlab` command: parse, load the device, run, print.

mod cli;
mod commands;
mod device;
mod progress;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    if let Err(e) = commands::dispatch(args) {
        eprintln!("ssdlab: {e:#}");
        std::process::exit(1);
    }
}
