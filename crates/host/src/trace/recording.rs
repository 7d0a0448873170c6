//! ssdlab recordings (`ssdlab serve --record FILE`): every request a live server answered, one
//! per line, in arrival order, after a header line that names the version and the columns:
//!
//! ```text
//! ssdlab record 1: t_ns conn queue op offset len flags status latency_ns device_ns
//! # device softssd, 16 blocks per plane, timing model, dilation 1, seed 1
//! 1204331 0 1 write 1310720 4096 - ok 61820 46079
//! 1270022 1 2 read 81920 4096 fua ok 24310 13950
//! ```
//!
//! 1. **Header.** The first line that is not empty or a comment must be the header above,
//!    exactly (version 1 and its columns); a recording of another version is a bad line that
//!    says so. Comment lines (`#`) anywhere are skipped.
//! 2. **Columns.** `t_ns` arrival in nanoseconds since the server started (wall clock);
//!    `conn` the connection, from 0 in the order they were served; `queue` the NVMe queue
//!    pair it was served on, from 1; `op` one of `read`, `write`, `flush`, `trim`,
//!    `write-zeroes`; `offset` and `len` in bytes; `flags` `-` or `fua`; `status` `ok` or the
//!    NBD error the client got (`EINVAL`, `EIO`...); `latency_ns` from the moment the server
//!    read the request to the moment its reply was written (wall clock); `device_ns` the
//!    modelled latency, submission to completion in the device's virtual time, or `-`.
//! 3. **Records.** A line is a [`TraceRecord`] of volume 0 with `queue` = the queue pair minus
//!    1; `write-zeroes` is a write (the server writes zero data). The other columns are checked
//!    and kept in [`Recorded`], which `ssdlab compare` reads.

use super::error::BadLine;
use super::fields::{self, next, no_more, words};
use super::parser::LineParser;
use super::record::{TraceOp, TraceRecord};

/// The header line of a version 1 recording.
pub const RECORDING_HEADER: &str =
    "ssdlab record 1: t_ns conn queue op offset len flags status latency_ns device_ns";

/// What starts the header line of a recording of any version.
const HEADER_START: &[u8] = b"ssdlab record ";

/// An operation as a recording names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RecordedOp {
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `flush`.
    Flush,
    /// `trim`.
    Trim,
    /// `write-zeroes`.
    WriteZeroes,
}

impl RecordedOp {
    /// The column's word.
    pub fn name(self) -> &'static str {
        match self {
            RecordedOp::Read => "read",
            RecordedOp::Write => "write",
            RecordedOp::Flush => "flush",
            RecordedOp::Trim => "trim",
            RecordedOp::WriteZeroes => "write-zeroes",
        }
    }

    /// What a replay makes of it.
    pub fn trace_op(self) -> TraceOp {
        match self {
            RecordedOp::Read => TraceOp::Read,
            RecordedOp::Write | RecordedOp::WriteZeroes => TraceOp::Write,
            RecordedOp::Flush => TraceOp::Flush,
            RecordedOp::Trim => TraceOp::Trim,
        }
    }

    fn parse(word: &[u8]) -> Result<Self, BadLine> {
        Ok(match word {
            b"read" => RecordedOp::Read,
            b"write" => RecordedOp::Write,
            b"flush" => RecordedOp::Flush,
            b"trim" => RecordedOp::Trim,
            b"write-zeroes" => RecordedOp::WriteZeroes,
            other => return Err(BadLine::bad("op", other)),
        })
    }
}

/// One line of a recording: one request a live server answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// Arrival, ns since the server started (wall clock).
    pub t_ns: u64,
    /// The connection, from 0.
    pub conn: u32,
    /// The NVMe queue pair, from 1.
    pub queue: u16,
    /// The operation.
    pub op: RecordedOp,
    /// Byte offset.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
    /// Force unit access.
    pub fua: bool,
    /// `None` if it succeeded, else the NBD error's name (`EINVAL`, `EIO`...).
    pub error: Option<String>,
    /// Request read to reply written, ns (wall clock).
    pub latency_ns: u64,
    /// The modelled latency, submission to completion in virtual time, ns.
    pub device_ns: Option<u64>,
}

/// Whether `text` is a recording's header line, of any version (for format detection).
pub(crate) fn is_header(text: &[u8]) -> bool {
    text.trim_ascii_start().starts_with(HEADER_START)
}

impl Recorded {
    /// Appends the request's line (with its `\n`) to `out`.
    pub fn write(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(
            out,
            "{} {} {} {} {} {} {} {} {} ",
            self.t_ns,
            self.conn,
            self.queue,
            self.op.name(),
            self.offset,
            self.len,
            if self.fua { "fua" } else { "-" },
            self.error.as_deref().unwrap_or("ok"),
            self.latency_ns
        );
        let _ = match self.device_ns {
            Some(d) => writeln!(out, "{d}"),
            None => writeln!(out, "-"),
        };
    }

    /// Parses a request line (not the header, not a comment).
    pub fn parse(text: &[u8]) -> Result<Recorded, BadLine> {
        let mut f = words(text);
        let t_ns = fields::time_units("t_ns", next(&mut f, "t_ns")?, 1)?;
        let conn = fields::uint32("conn", next(&mut f, "conn")?)?;
        let q = next(&mut f, "queue")?;
        let queue = match fields::uint32("queue", q)? {
            n @ 1..=0xffff => n as u16,
            _ => return Err(BadLine::bad("queue", q)),
        };
        let op = RecordedOp::parse(next(&mut f, "op")?)?;
        let offset = fields::bytes("offset", next(&mut f, "offset")?)?;
        let len = fields::bytes("len", next(&mut f, "len")?)?;
        let fua = match next(&mut f, "flags")? {
            b"-" => false,
            b"fua" => true,
            other => return Err(BadLine::bad("flags", other)),
        };
        let error = match next(&mut f, "status")? {
            b"ok" => None,
            e if !e.is_empty() && e.iter().all(u8::is_ascii_uppercase) => {
                Some(String::from_utf8_lossy(e).into_owned())
            }
            other => return Err(BadLine::bad("status", other)),
        };
        let latency_ns = fields::time_units("latency_ns", next(&mut f, "latency_ns")?, 1)?;
        let device_ns = match next(&mut f, "device_ns")? {
            b"-" => None,
            d => Some(fields::time_units("device_ns", d, 1)?),
        };
        no_more(&mut f)?;
        fields::check_end(offset, len)?;
        Ok(Recorded { t_ns, conn, queue, op, offset, len, fua, error, latency_ns, device_ns })
    }

    /// The request as a trace record of line `line`.
    pub fn record(&self, line: u64) -> TraceRecord {
        TraceRecord {
            line,
            time_ns: Some(self.t_ns),
            volume: 0,
            op: self.op.trace_op(),
            offset: self.offset,
            len: self.len,
            queue: Some(u32::from(self.queue) - 1),
        }
    }
}

/// The recording parser: whether the header has been read.
#[derive(Debug, Default)]
pub(crate) struct RecordingParser {
    header: bool,
}

impl LineParser for RecordingParser {
    fn parse(&mut self, line: u64, text: &[u8]) -> Result<Option<TraceRecord>, BadLine> {
        if !self.header {
            let text = text.trim_ascii();
            if text == RECORDING_HEADER.as_bytes() {
                self.header = true;
                return Ok(None);
            }
            if is_header(text) {
                return Err(BadLine::bad("recording header (this ssdlab reads version 1)", text));
            }
            return Err(BadLine::Missing("recording header line first"));
        }
        Ok(Some(Recorded::parse(text)?.record(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Recorded {
        Recorded {
            t_ns: 1_204_331,
            conn: 3,
            queue: 2,
            op: RecordedOp::WriteZeroes,
            offset: 8192,
            len: 4096,
            fua: true,
            error: None,
            latency_ns: 61_820,
            device_ns: Some(46_079),
        }
    }

    #[test]
    fn a_line_round_trips_and_becomes_a_record_on_its_queue() {
        let mut out = String::new();
        let r = sample();
        r.write(&mut out);
        let failed =
            Recorded { error: Some("EIO".into()), device_ns: None, op: RecordedOp::Flush, ..r.clone() };
        failed.write(&mut out);
        assert_eq!(
            out,
            "1204331 3 2 write-zeroes 8192 4096 fua ok 61820 46079\n1204331 3 2 flush 8192 4096 fua EIO 61820 -\n"
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(Recorded::parse(lines[0].as_bytes()), Ok(r.clone()));
        assert_eq!(Recorded::parse(lines[1].as_bytes()), Ok(failed));
        let rec = r.record(7);
        assert_eq!(
            (rec.line, rec.time_ns, rec.op, rec.queue, rec.volume),
            (7, Some(1_204_331), TraceOp::Write, Some(1), 0)
        );
    }

    #[test]
    fn the_header_comes_first_and_bad_columns_are_named() {
        let mut p = RecordingParser::default();
        assert_eq!(
            p.parse(1, b"0 0 1 read 0 4096 - ok 1 1"),
            Err(BadLine::Missing("recording header line first"))
        );
        assert!(p.parse(1, b"ssdlab record 2: t_ns").unwrap_err().to_string().contains("version 1"));
        assert_eq!(p.parse(1, RECORDING_HEADER.as_bytes()), Ok(None));
        assert!(p.parse(2, b"0 0 1 read 0 4096 - ok 1 1").unwrap().is_some());
        let cases: [(&str, &str); 6] = [
            ("0 0 0 read 0 4096 - ok 1 1", "bad queue '0'"),
            ("0 0 1 copy 0 4096 - ok 1 1", "bad op 'copy'"),
            ("0 0 1 read 0 4096 sync ok 1 1", "bad flags 'sync'"),
            ("0 0 1 read 0 4096 - fine 1 1", "bad status 'fine'"),
            ("0 0 1 read 0 4096 - ok 1", "missing device_ns"),
            ("0 0 1 read 0 4096 - ok 1 1 9", "unexpected extra field '9'"),
        ];
        for (text, want) in cases {
            assert_eq!(p.parse(3, text.as_bytes()).unwrap_err().to_string(), want, "{text}");
        }
    }
}
