//! Fuzzes the blkparse text trace parser: arbitrary bytes read as blkparse output, with the action chosen
//! by the first byte (Q, D, C or G). See [`trace_check`] for what is checked.

#![no_main]

#[path = "trace_check.rs"]
mod trace_check;

use host::trace::TraceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let action = ['Q', 'D', 'C', 'G'][usize::from(first % 4)];
    trace_check::check(rest, Some(TraceFormat::Blkparse), action);
});
