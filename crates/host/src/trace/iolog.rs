//! fio iolog, versions 2 and 3 (what fio's `write_iolog` writes and `read_iolog` replays):
//!
//! ```text
//! fio version 2 iolog                    fio version 3 iolog
//! /dev/sdb add                           0 /dev/sdb add
//! /dev/sdb open                          12 /dev/sdb open
//! /dev/sdb write 0 4096                  873 /dev/sdb write 0 4096
//! /dev/sdb wait 1500 0                   2391 /dev/sdb read 4096 4096
//! /dev/sdb read 4096 4096                2399 /dev/sdb sync 0 0
//! /dev/sdb close                         3000 /dev/sdb close
//! ```
//!
//! 1. **Header.** The first line that is not empty or a comment must be `fio version 2 iolog`
//!    or `fio version 3 iolog`; entries before it are bad lines.
//! 2. **Entries.** `[timestamp] filename action [offset length]` (the timestamp in v3 only).
//!    `read`, `write` and `trim` need offset and length (bytes) and become records; `sync` and
//!    `datasync` become flush records (offset and length optional, 0 if absent); `add`, `open`
//!    and `close` take no more fields and yield no record.
//! 3. **Volumes.** Each file name gets a small number in order of first appearance on any entry.
//! 4. **Time, v3.** The timestamp is microseconds since the start of the run, as fio writes it
//!    (`utime_since_now` in fio's `log_io_u`) and replays it. `wait` is not allowed in v3.
//! 5. **Time, v2.** `filename wait DELAY [length]` waits DELAY microseconds (fio's documented
//!    meaning); each record's time is the sum of the waits before it, so a log without waits
//!    has every record at time 0, to be issued back to back as fio would.

use super::error::BadLine;
use super::fields::{self, next, no_more, words};
use super::parser::LineParser;
use super::record::{TraceOp, TraceRecord};
use super::volumes::Volumes;

/// Nanoseconds per microsecond (v3 timestamps, v2 waits).
const US_NS: u64 = 1_000;

/// The fio iolog parser: the version from the header, file numbering, and the v2 clock.
#[derive(Debug, Default)]
pub(crate) struct IologParser {
    /// 2 or 3 once the header has been read.
    version: Option<u8>,
    /// File name to volume number.
    files: Volumes<Vec<u8>>,
    /// v2: the sum of the waits so far, in nanoseconds.
    waited_ns: u64,
}

/// Whether `text` is a fio iolog header line (for format detection).
pub(crate) fn is_header(text: &[u8]) -> bool {
    text.trim_ascii_start().starts_with(b"fio version ")
}

/// The version a header line declares.
fn header_version(text: &[u8]) -> Result<u8, BadLine> {
    let mut w = words(text);
    match (w.next(), w.next(), w.next(), w.next(), w.next()) {
        (Some(b"fio"), Some(b"version"), Some(b"2"), Some(b"iolog"), None) => Ok(2),
        (Some(b"fio"), Some(b"version"), Some(b"3"), Some(b"iolog"), None) => Ok(3),
        _ => Err(BadLine::bad("iolog header", text.trim_ascii())),
    }
}

/// The optional `offset length` pair of a sync: both or neither.
fn optional_range<'a>(f: &mut impl Iterator<Item = &'a [u8]>) -> Result<(u64, u64), BadLine> {
    match f.next() {
        None => Ok((0, 0)),
        Some(offset) => {
            let offset = fields::bytes("offset", offset)?;
            Ok((offset, fields::bytes("length", next(f, "length")?)?))
        }
    }
}

impl LineParser for IologParser {
    fn parse(&mut self, line: u64, text: &[u8]) -> Result<Option<TraceRecord>, BadLine> {
        let Some(version) = self.version else {
            if !is_header(text) {
                return Err(BadLine::NoIologHeader);
            }
            self.version = Some(header_version(text)?);
            return Ok(None);
        };
        let mut f = words(text);
        let stamp = match version {
            3 => Some(fields::time_units("timestamp", next(&mut f, "timestamp")?, US_NS)?),
            _ => None,
        };
        let name = next(&mut f, "filename")?;
        let action = next(&mut f, "action")?;
        let (op, offset, len) = match action {
            b"add" | b"open" | b"close" => {
                no_more(&mut f)?;
                self.files.id(name)?;
                return Ok(None);
            }
            b"wait" if version == 3 => return Err(BadLine::WaitInV3),
            b"wait" => {
                let delay = next(&mut f, "delay")?;
                let delay_ns = fields::time_units("delay", delay, US_NS)?;
                if let Some(length) = f.next() {
                    fields::bytes("length", length)?;
                }
                no_more(&mut f)?;
                let waited = self.waited_ns.checked_add(delay_ns);
                let waited = waited.ok_or_else(|| BadLine::too_large("delay", delay, fields::U64_NS))?;
                self.files.id(name)?;
                self.waited_ns = waited;
                return Ok(None);
            }
            b"read" | b"write" | b"trim" => {
                let offset = fields::bytes("offset", next(&mut f, "offset")?)?;
                let len = fields::bytes("length", next(&mut f, "length")?)?;
                let op = match action {
                    b"read" => TraceOp::Read,
                    b"write" => TraceOp::Write,
                    _ => TraceOp::Trim,
                };
                (op, offset, len)
            }
            b"sync" | b"datasync" => {
                let (offset, len) = optional_range(&mut f)?;
                (TraceOp::Flush, offset, len)
            }
            other => return Err(BadLine::bad("action", other)),
        };
        no_more(&mut f)?;
        fields::check_end(offset, len)?;
        let volume = self.files.id(name)?;
        let time_ns = Some(stamp.unwrap_or(self.waited_ns));
        Ok(Some(TraceRecord { line, time_ns, volume, op, offset, len, queue: None }))
    }
}
