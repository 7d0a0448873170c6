//! Fuzzes the ssdlab recording parser (`ssdlab serve --record`): arbitrary bytes after a valid
//! header line, read with the format forced. See [`trace_check`] for what is checked.

#![no_main]

#[path = "trace_check.rs"]
mod trace_check;

use host::trace::{RECORDING_HEADER, TraceFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut text = format!("{RECORDING_HEADER}\n").into_bytes();
    text.extend_from_slice(data);
    trace_check::check(&text, Some(TraceFormat::Recording), 'Q');
});
