//! Fuzzes what happens before any parser: magic-byte decompression (gzip, bzip2, zstd, plain)
//! and format detection, then whichever parser detection picks. See [`trace_check`] for what
//! is checked.

#![no_main]

#[path = "trace_check.rs"]
mod trace_check;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| trace_check::check(data, None, 'Q'));
