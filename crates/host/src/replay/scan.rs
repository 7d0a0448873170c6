//! [`scan`]: one pass over a trace before it is replayed, so that what is wrong with it (a bad
//! line at the end, nothing to replay, timestamps running backwards) is known before a device
//! is built and aged for it, not after a replay of the rest.

use std::collections::BTreeMap;

use super::ReplaySpec;
use crate::trace::{TraceError, TraceOp, TraceReader};

/// What one pass over a trace found: the records a replay of the same [`ReplaySpec`] will read
/// (stopping at the same `max_records`) and what it will make of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceScan {
    /// Records read (bad lines excluded).
    pub records: u64,
    /// Records that become commands: neither flushes nor of zero length.
    pub requests: u64,
    /// Flush records (not replayed).
    pub flushes: u64,
    /// Zero-length records (not replayed).
    pub zero_length: u64,
    /// Bad lines skipped (with `skip_bad_lines`; without it the first one is the scan's error).
    pub bad_lines: u64,
    /// The first bad line skipped, as the error it would have been.
    pub first_bad_line: Option<String>,
    /// Requests timestamped before an earlier request: what a timed replay counts as
    /// `out_of_order` (and issues at once).
    pub backwards: u64,
    /// The line of the first of them.
    pub first_backwards_line: Option<u64>,
    /// Per volume, the requests it has and its footprint: the largest end (offset + length)
    /// of its requests, bytes, as the trace addresses them (what a per-volume region needs).
    pub volumes: BTreeMap<u32, VolumeScan>,
}

/// One volume of a scanned trace.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct VolumeScan {
    /// Its requests (records that become commands).
    pub requests: u64,
    /// The largest end (offset + length) of its requests, bytes.
    pub footprint: u64,
}

/// Reads the whole trace `spec` names once, as a replay would (same format, same bad-line
/// handling, same record limit), without replaying it. Memory stays bounded as the reader's
/// does; the time is one decompression and parse of the file.
pub fn scan(spec: &ReplaySpec) -> Result<TraceScan, TraceError> {
    scan_reader(TraceReader::open(&spec.path, spec.read)?, spec.max_records)
}

/// [`scan`] of the records of `reader`, the first `max_records` if given.
fn scan_reader(mut reader: TraceReader, max_records: Option<u64>) -> Result<TraceScan, TraceError> {
    let mut s = TraceScan::default();
    let mut last = 0u64;
    while max_records.is_none_or(|m| s.records < m) {
        let Some(rec) = reader.next() else { break };
        let rec = rec?;
        s.records += 1;
        match rec.op {
            TraceOp::Flush => s.flushes += 1,
            _ if rec.len == 0 => s.zero_length += 1,
            _ => {
                s.requests += 1;
                let v = s.volumes.entry(rec.volume).or_default();
                v.requests += 1;
                v.footprint = v.footprint.max(rec.offset.saturating_add(rec.len));
                // As the timed dispatcher reads them: no timestamp keeps the last one.
                let t = rec.time_ns.unwrap_or(last);
                if t < last {
                    s.backwards += 1;
                    s.first_backwards_line.get_or_insert(rec.line);
                }
                last = last.max(t);
            }
        }
    }
    s.bad_lines = reader.bad_lines();
    s.first_bad_line = reader.first_bad_line().map(ToString::to_string);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::ReadOptions;

    fn scan_text(
        text: &str,
        skip_bad_lines: bool,
        max_records: Option<u64>,
    ) -> Result<TraceScan, TraceError> {
        let options = ReadOptions { skip_bad_lines, ..ReadOptions::default() };
        let reader = TraceReader::from_reader("t.spc", std::io::Cursor::new(text.to_string()), options)?;
        scan_reader(reader, max_records)
    }

    #[test]
    fn counts_what_a_replay_will_do_with_each_record() {
        let text = "0,0,4096,r,0.3\n0,8,0,w,0.1\n0,8,4096,w,0.2\n0,16,4096,r,0.1\n0,24,4096,r,0.4\n";
        let s = scan_text(text, false, None).unwrap();
        let want = TraceScan {
            records: 5,
            requests: 4,
            zero_length: 1,
            backwards: 2,
            first_backwards_line: Some(3),
            volumes: [(0, VolumeScan { requests: 4, footprint: 32 * 512 })].into(),
            ..TraceScan::default()
        };
        assert_eq!(s, want);
        assert_eq!(scan_text(text, false, Some(2)).unwrap().requests, 1, "stops at max_records");
    }

    #[test]
    fn a_bad_last_line_is_found_or_counted() {
        let text = "0,0,4096,r,0.1\n0,8,4096,r,0.2\n0,x1,4096,r,0.3\n";
        let e = scan_text(text, false, None).unwrap_err().to_string();
        assert_eq!(e, "t.spc:3: bad LBA 'x1'");
        let s = scan_text(text, true, None).unwrap();
        assert_eq!((s.records, s.bad_lines), (2, 1));
        assert_eq!(s.first_bad_line.as_deref(), Some("t.spc:3: bad LBA 'x1'"));
        assert_eq!(scan_text(text, false, Some(2)).unwrap().records, 2, "not read past max_records");
    }
}
