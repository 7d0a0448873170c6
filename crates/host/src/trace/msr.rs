//! MSR Cambridge CSV (the SNIA IOTTA "MSR Cambridge Traces"):
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166385295514663,hm,0,Write,9056014336,2048,2833
//! ```
//!
//! Timestamp is a Windows FILETIME (100 ns ticks since 1601-01-01 UTC), kept in that epoch as
//! nanoseconds (ticks times 100; the replayer subtracts the first). Hostname is ignored but must
//! be there; DiskNumber is the volume; Type is `Read` or `Write` (in any case); Offset and Size
//! are bytes; ResponseTime (100 ns ticks) must be a number and is otherwise ignored. Exactly
//! seven fields.

use super::error::BadLine;
use super::fields::{self, commas, next};
use super::parser::LineParser;
use super::record::{TraceOp, TraceRecord};

/// Nanoseconds per FILETIME tick.
const TICK_NS: u64 = 100;

/// The MSR Cambridge parser (stateless).
#[derive(Debug, Default)]
pub(crate) struct MsrParser;

impl LineParser for MsrParser {
    fn parse(&mut self, line: u64, text: &[u8]) -> Result<Option<TraceRecord>, BadLine> {
        let mut f = commas(text);
        let time = fields::time_units("Timestamp", next(&mut f, "Timestamp")?, TICK_NS)?;
        let host = next(&mut f, "Hostname")?;
        if host.is_empty() {
            return Err(BadLine::bad("Hostname", host));
        }
        let volume = fields::uint32("DiskNumber", next(&mut f, "DiskNumber")?)?;
        let op = match next(&mut f, "Type")? {
            t if t.eq_ignore_ascii_case(b"Read") => TraceOp::Read,
            t if t.eq_ignore_ascii_case(b"Write") => TraceOp::Write,
            other => return Err(BadLine::bad("Type", other)),
        };
        let offset = fields::bytes("Offset", next(&mut f, "Offset")?)?;
        let len = fields::bytes("Size", next(&mut f, "Size")?)?;
        fields::uint("ResponseTime", next(&mut f, "ResponseTime")?)?;
        fields::no_more(&mut f)?;
        fields::check_end(offset, len)?;
        Ok(Some(TraceRecord { line, time_ns: Some(time), volume, op, offset, len, queue: None }))
    }
}
