//! [`TraceRecord`]: one request of a trace, in bytes and nanoseconds, exactly as the trace says.

use serde::{Deserialize, Serialize};
use sim::SimDuration;

/// What a trace record asks of the device.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceOp {
    /// Read `len` bytes at `offset`.
    Read,
    /// Write `len` bytes at `offset`.
    Write,
    /// Deallocate `len` bytes at `offset` (a discard, a fio `trim`).
    Trim,
    /// Make earlier writes durable (a blkparse flush, a fio `sync` or `datasync`). Its offset and
    /// length are what the trace says, usually 0.
    Flush,
}

impl TraceOp {
    /// The lower-case name (`read`, `write`, `trim`, `flush`).
    pub fn name(self) -> &'static str {
        match self {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Trim => "trim",
            TraceOp::Flush => "flush",
        }
    }
}

/// One request of a trace.
///
/// Offsets and lengths are converted to bytes (sector-based formats multiply by 512) and are
/// otherwise exactly as the trace says: not aligned, not folded into any capacity, possibly
/// zero-length (the replayer decides what to do with those, and counts them). The reader
/// guarantees `offset + len` fits in a `u64`: lines where it does not are bad lines.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceRecord {
    /// The line of the (decompressed) trace text this record comes from, from 1.
    pub line: u64,
    /// When the request was issued, in nanoseconds since the trace's own epoch: seconds since
    /// the start for SPC and blkparse, FILETIME (since 1601-01-01 UTC) for MSR, the MQSim
    /// arrival time as is, the sum of the `wait`s so far for fio iolog v2, and the timestamp for
    /// fio iolog v3. All five formats give every record a time, so this is `Some` for every
    /// record they yield; `None` is for records without one. Timestamps are yielded as the
    /// trace has them, unsorted if it is.
    pub time_ns: Option<u64>,
    /// The volume the request addresses: the SPC ASU, the MSR disk number, the MQSim device, or
    /// for blkparse and fio iolog a small number given to each device (`maj,min`) or file name
    /// in order of first appearance, from 0.
    pub volume: u32,
    /// Read, write, trim or flush.
    pub op: TraceOp,
    /// Byte offset within the volume.
    pub offset: u64,
    /// Length in bytes (may be 0).
    pub len: u64,
    /// The submission queue the trace says the request went through, from 0, where it says
    /// one: an ssdlab recording's NVMe queue pair (its `queue` column minus 1), blkparse's CPU
    /// (Linux blk-mq maps each CPU to a hardware queue). `None` for the other formats. A
    /// replay with trace queues puts the request on queue pair `queue mod Q + 1`.
    pub queue: Option<u32>,
}

impl TraceRecord {
    /// [`time_ns`](Self::time_ns) as a duration since the trace's epoch.
    pub fn time(&self) -> Option<SimDuration> {
        self.time_ns.map(SimDuration::from_nanos)
    }

    /// The first byte after the request (`offset + len`, which never overflows).
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}
