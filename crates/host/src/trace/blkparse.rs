//! blkparse's default text output (`blkparse -i TRACE`, no `-f` format):
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
//!   8,0    3        2     0.000004298   697  G   W 223490 + 8 [kjournald]
//!   8,0    1        3     0.000101000  1234  Q FWS [jbd2/sda1-8]
//!   8,0    0        0     0.003367364     0  m   N cfq workload slice:300
//! CPU0 (8,0):
//!  Reads Queued:           0,        0KiB  Writes Queued:          14,       56KiB
//! ```
//!
//! An event line is `maj,min cpu sequence seconds.nanoseconds pid action RWBS` and then, by
//! action, `sector + count [process]`, `sector [error]`, `[process]` or other details.
//!
//! 1. **Volumes.** Each `maj,min` device gets a small number in order of first appearance on any
//!    event line, whichever action it has, so volume numbers do not depend on the action read.
//! 2. **One action.** Only events whose action is [`ReadOptions::blkparse_action`] (default `Q`,
//!    queued) become records; the other events of the request's life (`G`, `I`, `D`, `C`...) and
//!    message lines (`m`) are checked and skipped, so each request is counted once.
//! 3. **RWBS.** An optional leading `F` (preflush), then `R` read, `W` write, `D` discard (trim;
//!    `DE` secure erase), `N` no data, or `F` (a flush operation), then any of `F` (FUA), `A`
//!    (read-ahead), `S` (sync), `M` (metadata), `B` (barrier), `E`. A request with data is a read,
//!    write or trim (a preflush on a write with data is not reported separately); a flush, or a
//!    preflush without data (`FWS` with no sectors, `FN`), is a flush; `N` without a flush is no
//!    I/O and yields no record.
//! 4. **Address.** `sector + count` gives offset and length in 512-byte sectors; a lone
//!    `sector` gives the offset and length 0; none gives offset 0, length 0.
//! 5. **Queues.** The CPU column is the record's [`queue`](TraceRecord::queue): Linux blk-mq
//!    maps each CPU to a hardware queue, so a replay with trace queues puts CPU c's requests
//!    on queue pair c mod Q + 1.
//! 6. **Not events.** Lines whose first field starts with a letter (blkparse's per-CPU and total
//!    summary, `CPU0 (8,0):`, `Throughput (R/W): ...`) are skipped; any other line that is not an
//!    event is a bad line.
//!
//! [`ReadOptions::blkparse_action`]: super::ReadOptions::blkparse_action

use super::error::BadLine;
use super::fields::{self, next, words};
use super::parser::LineParser;
use super::record::{TraceOp, TraceRecord};
use super::volumes::Volumes;

/// The blkparse parser: the chosen action and the device numbering.
#[derive(Debug)]
pub(crate) struct BlkparseParser {
    /// The action whose events become records.
    action: u8,
    /// `maj,min` to volume number.
    devices: Volumes<(u32, u32)>,
}

impl BlkparseParser {
    /// A parser taking `action` events (an ASCII letter).
    pub(crate) fn new(action: u8) -> Self {
        BlkparseParser { action, devices: Volumes::default() }
    }
}

/// The event header fields of an event line: device, time and action.
struct Header<'a> {
    device: (u32, u32),
    cpu: u32,
    time_ns: u64,
    action: &'a [u8],
}

/// `maj,min`, or `None` if `field` is not two numbers around one comma.
fn device(field: &[u8]) -> Option<(u32, u32)> {
    let comma = field.iter().position(|&b| b == b',')?;
    let major = fields::uint32("device", &field[..comma]).ok()?;
    let minor = fields::uint32("device", &field[comma + 1..]).ok()?;
    Some((major, minor))
}

/// Reads the header of an event line, or `Ok(None)` for summary text.
fn header<'a>(f: &mut impl Iterator<Item = &'a [u8]>) -> Result<Option<Header<'a>>, BadLine> {
    let first = next(f, "device")?;
    let Some(device) = device(first) else {
        return if first[0].is_ascii_alphabetic() { Ok(None) } else { Err(BadLine::bad("device", first)) };
    };
    let cpu = fields::uint32("CPU", next(f, "CPU")?)?;
    fields::uint("sequence", next(f, "sequence")?)?;
    let time_ns = fields::seconds("time", next(f, "time")?)?;
    fields::uint("PID", next(f, "PID")?)?;
    let action = next(f, "action")?;
    Ok(Some(Header { device, cpu, time_ns, action }))
}

/// Whether `text` is a blkparse event line (for format detection).
pub(crate) fn is_event_line(text: &[u8]) -> bool {
    matches!(header(&mut words(text)), Ok(Some(_)))
}

/// What an RWBS field asks for: `None` for no I/O.
fn rwbs_op(rwbs: &[u8], has_data: bool) -> Result<Option<TraceOp>, BadLine> {
    let bad = || BadLine::bad("RWBS", rwbs);
    let (preflush, rest) = match rwbs {
        [b'F', next, ..] if b"RWDNF".contains(next) => (true, &rwbs[1..]),
        _ => (false, rwbs),
    };
    let (&kind, flags) = rest.split_first().ok_or_else(bad)?;
    if !flags.iter().all(|b| b"FASMBE".contains(b)) {
        return Err(bad());
    }
    Ok(match kind {
        b'R' => Some(TraceOp::Read),
        b'D' => Some(TraceOp::Trim),
        b'W' if has_data || !preflush => Some(TraceOp::Write),
        b'W' | b'F' => Some(TraceOp::Flush),
        b'N' if preflush => Some(TraceOp::Flush),
        b'N' => None,
        _ => return Err(bad()),
    })
}

impl LineParser for BlkparseParser {
    fn parse(&mut self, line: u64, text: &[u8]) -> Result<Option<TraceRecord>, BadLine> {
        let mut f = words(text);
        let Some(header) = header(&mut f)? else { return Ok(None) };
        if header.action != [self.action] {
            self.devices.id(&header.device)?;
            return Ok(None);
        }
        let rwbs = next(&mut f, "RWBS")?;
        let (offset, len) = match f.next() {
            Some([b'[' | b'(', ..]) | None => (0, 0),
            Some(sector) => {
                let offset = fields::sectors("sector", sector)?;
                let len = match f.next() {
                    Some(b"+") => fields::sectors("count", next(&mut f, "count")?)?,
                    _ => 0,
                };
                (offset, len)
            }
        };
        let op = rwbs_op(rwbs, len > 0)?;
        fields::check_end(offset, len)?;
        let volume = self.devices.id(&header.device)?;
        let Some(op) = op else { return Ok(None) };
        Ok(Some(TraceRecord {
            line,
            time_ns: Some(header.time_ns),
            volume,
            op,
            offset,
            len,
            queue: Some(header.cpu),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_letters() {
        let op = |s: &str, data| rwbs_op(s.as_bytes(), data);
        assert_eq!(op("R", true), Ok(Some(TraceOp::Read)));
        assert_eq!(op("RA", true), Ok(Some(TraceOp::Read)));
        assert_eq!(op("RM", true), Ok(Some(TraceOp::Read)));
        assert_eq!(op("W", true), Ok(Some(TraceOp::Write)));
        assert_eq!(op("WS", true), Ok(Some(TraceOp::Write)));
        assert_eq!(op("WFS", true), Ok(Some(TraceOp::Write)));
        assert_eq!(op("FWS", true), Ok(Some(TraceOp::Write)));
        assert_eq!(op("W", false), Ok(Some(TraceOp::Write)), "a zero-length write stays a write");
        assert_eq!(op("FWS", false), Ok(Some(TraceOp::Flush)));
        assert_eq!(op("FN", false), Ok(Some(TraceOp::Flush)));
        assert_eq!(op("F", false), Ok(Some(TraceOp::Flush)));
        assert_eq!(op("FF", false), Ok(Some(TraceOp::Flush)));
        assert_eq!(op("D", true), Ok(Some(TraceOp::Trim)));
        assert_eq!(op("DE", true), Ok(Some(TraceOp::Trim)));
        assert_eq!(op("N", false), Ok(None));
        for bad in ["", "X", "WQ", "r", "FX"] {
            assert_eq!(op(bad, true), Err(BadLine::bad("RWBS", bad.as_bytes())), "{bad}");
        }
    }
}
