//! End-to-end tests of the `ssdlab` command.

mod bad_input;
mod cache_partition;
mod calibrate;
mod calibration;
mod cmt_partition;
mod commands;
mod compare;
mod determinism;
mod experiments;
mod fdp;
mod flow_flash;
mod flows;
mod gc_fidelity;
mod gc_pacing;
mod gc_theory;
mod isolation;
mod mqsim_fast18;
mod pcie_maps;
mod plots;
mod precondition;
mod pts;
mod record_replay;
mod regressions;
mod reliability;
mod replay;
mod replay_volumes;
mod serve;
mod serve_fs;
mod serve_start;
mod shape;
mod snapshot;
mod soak;
mod sweep;
mod systems;
mod trace_events;
mod zns;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A device small enough that a run takes milliseconds: 2 ch x 2 ways x 2 planes x 64 blocks
/// x 32 pages of 16 KiB, 15% spare. Ends in its `[ftl]` table, so callers may append to it.
/// (The Python package's tests use the same file.)
pub const SMALL: &str = include_str!("small.toml");

/// A small DFTL device with a tiny CMT (16 KiB) and a 256 KiB cache: translation-page traffic
/// and GC from the first thousand commands.
pub const TINY_CMT: &str = r#"
name = "dftl, tiny cmt"
[geometry]
channels = 2
ways = 1
planes = 2
blocks = 48
pages = 32
page_size = "16KiB"
[ftl]
op = 0.2
mapping = { kind = "dftl", cmt = "16KiB", segment_entries = 64 }
cache = { capacity = "256KiB" }
"#;

/// Writes the device `toml` as `dir/small.toml` and returns its path.
pub fn device_file(dir: &Path, toml: &str) -> PathBuf {
    let path = dir.join("small.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// Runs `ssdlab` with `args`.
pub fn ssdlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ssdlab")).args(args).output().expect("ssdlab runs")
}

/// Stdout of a successful run.
pub fn ok(args: &[&str]) -> String {
    let out = ssdlab(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ssdlab {args:?} failed: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Stderr of a run that must fail cleanly: exit code 1, one line, no panic.
pub fn fails(args: &[&str]) -> String {
    let out = ssdlab(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "ssdlab {args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "ssdlab {args:?} panicked: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one-line error expected: {stderr}");
    stderr
}
