//! Tests of the trace readers: the shared real traces, hand-written edge cases per format with
//! their exact error texts, the reader's detection, decompression and bad-line handling, and
//! seeded property tests (render records in each format and parse them back; arbitrary bytes
//! never panic).

mod blkparse;
mod iolog;
mod mqsim;
mod msr;
mod properties;
mod reader;
mod render;
mod shared;
mod spc;

use std::io::Cursor;
use std::path::Path;

use super::*;

/// A record, briefly.
fn rec(line: u64, time_ns: u64, volume: u32, op: TraceOp, offset: u64, len: u64) -> TraceRecord {
    TraceRecord { line, time_ns: Some(time_ns), volume, op, offset, len, queue: None }
}

/// A reader over `text` named `t`, with `format` forced (or detected if `None`).
fn reader(format: Option<TraceFormat>, text: &str) -> TraceReader {
    let options = ReadOptions { format, ..ReadOptions::default() };
    TraceReader::from_reader("t", Cursor::new(text.as_bytes().to_vec()), options).unwrap()
}

/// Every record of `text` in `format`; panics on any error.
fn records(format: TraceFormat, text: &str) -> Vec<TraceRecord> {
    reader(Some(format), text).collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{e}"))
}

/// The error that stops reading `text` in `format`, displayed; panics if there is none.
fn error(format: TraceFormat, text: &str) -> String {
    match reader(Some(format), text).find_map(Result::err) {
        Some(e) => e.to_string(),
        None => panic!("no error reading {text:?} as {format}"),
    }
}

/// Checks that each `(line, message)` stops reading with `t:N: message` at the line's own
/// number, after `prefix` (header lines that come first).
fn assert_errors(format: TraceFormat, prefix: &str, cases: &[(&str, &str)]) {
    let line = prefix.lines().count() + 1;
    for (text, message) in cases {
        let got = error(format, &format!("{prefix}{text}\n"));
        assert_eq!(got, format!("t:{line}: {message}"), "line {text:?}");
    }
}
