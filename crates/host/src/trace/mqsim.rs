//! MQSim's ASCII trace format (which MQSim calls DiskSim's):
//!
//! ```text
//! arrival_time_ns device start_lba size_sectors type
//! 11413000 0 657728 16 1
//! ```
//!
//! Fields are separated by spaces or tabs. The arrival time is whole nanoseconds (kept as is),
//! device is the volume, the start LBA and size count 512-byte sectors, type is `1` for a read
//! and `0` for a write (MQSim accepts nothing else). Exactly five fields.

use super::error::BadLine;
use super::fields::{self, next, words};
use super::parser::LineParser;
use super::record::{TraceOp, TraceRecord};

/// The MQSim / DiskSim ASCII parser (stateless).
#[derive(Debug, Default)]
pub(crate) struct MqsimParser;

impl LineParser for MqsimParser {
    fn parse(&mut self, line: u64, text: &[u8]) -> Result<Option<TraceRecord>, BadLine> {
        let mut f = words(text);
        let time = fields::time_units("arrival time", next(&mut f, "arrival time")?, 1)?;
        let volume = fields::uint32("device", next(&mut f, "device")?)?;
        let offset = fields::sectors("start LBA", next(&mut f, "start LBA")?)?;
        let len = fields::sectors("size", next(&mut f, "size")?)?;
        let op = match next(&mut f, "type")? {
            b"1" => TraceOp::Read,
            b"0" => TraceOp::Write,
            other => return Err(BadLine::bad("type", other)),
        };
        fields::no_more(&mut f)?;
        fields::check_end(offset, len)?;
        Ok(Some(TraceRecord { line, time_ns: Some(time), volume, op, offset, len, queue: None }))
    }
}
