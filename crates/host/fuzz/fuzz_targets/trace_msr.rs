//! Fuzzes the MSR Cambridge CSV trace parser: arbitrary bytes read with the format forced. See
//! [`trace_check`] for what is checked.

#![no_main]

#[path = "trace_check.rs"]
mod trace_check;

use host::trace::TraceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| trace_check::check(data, Some(TraceFormat::Msr), 'Q'));
