//! SPC, as the UMass Trace Repository publishes it (Financial, WebSearch):
//!
//! ```text
//! ASU,LBA,Size,Opcode,Timestamp[,extra...]
//! 0,657728,8192,r,0.011413
//! ```
//!
//! ASU is the application storage unit (the volume), LBA counts 512-byte sectors, Size is in
//! bytes, Opcode is `r` or `w` in either case, Timestamp is seconds since the start of the trace
//! (fractional; kept to the nanosecond). Fields may be padded with spaces; fields after the
//! fifth are ignored, as real SPC files carry some.

use super::error::BadLine;
use super::fields::{self, commas, next};
use super::parser::LineParser;
use super::record::{TraceOp, TraceRecord};

/// The SPC parser (stateless).
#[derive(Debug, Default)]
pub(crate) struct SpcParser;

impl LineParser for SpcParser {
    fn parse(&mut self, line: u64, text: &[u8]) -> Result<Option<TraceRecord>, BadLine> {
        let mut f = commas(text);
        let volume = fields::uint32("ASU", next(&mut f, "ASU")?)?;
        let offset = fields::sectors("LBA", next(&mut f, "LBA")?)?;
        let len = fields::bytes("Size", next(&mut f, "Size")?)?;
        let op = match next(&mut f, "Opcode")? {
            b"r" | b"R" => TraceOp::Read,
            b"w" | b"W" => TraceOp::Write,
            other => return Err(BadLine::bad("Opcode", other)),
        };
        let time = fields::seconds("Timestamp", next(&mut f, "Timestamp")?)?;
        fields::check_end(offset, len)?;
        Ok(Some(TraceRecord { line, time_ns: Some(time), volume, op, offset, len, queue: None }))
    }
}
