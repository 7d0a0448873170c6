//! blkparse edge cases.

use super::*;

const F: TraceFormat = TraceFormat::Blkparse;

/// `r` submitted from CPU `cpu` (blkparse's CPU column is the record's queue).
fn on(cpu: u32, r: TraceRecord) -> TraceRecord {
    TraceRecord { queue: Some(cpu), ..r }
}

/// A blkparse run over two devices: the life of a few requests, a flush, a discard, message
/// lines, and the summary trailer.
const RUN: &str = "\
  8,0    3        1     0.000000000   697  A   W 223490 + 8 <- (8,1) 223427
  8,0    3        2     0.000000802   697  Q   W 223490 + 8 [kjournald]
  8,0    3        3     0.000004298   697  G   W 223490 + 8 [kjournald]
  8,0    3        4     0.000006506   697  P   N [kjournald]
  8,0    3        5     0.000008270   697  I   W 223490 + 8 [kjournald]
  8,0    0        0     0.000009000     0  m   N cfq697 insert_request
  8,0    3        6     0.000011270   697  U   N [kjournald] 1
  8,0    3        7     0.000013514   697  D   W 223490 + 8 [kjournald]
  8,16   1        1     0.000020000  1234  Q  RA 4096 + 256 [cat]
  8,16   1        2     0.000030000  1234  Q FWS [jbd2/sdb1-8]
  8,0    3        8     0.000215839     0  C   W 223490 + 8 [0]
  8,16   1        3     0.000300000  1234  Q   D 1000 + 2048 [fstrim]
  8,16   1        4     0.000310000  1234  C FWS 0 [0]
  8,0    2        9     0.000400000   700  Q  WS 8 + 0 [zero]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        1,        4KiB
Total (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB

Throughput (R/W): 0KiB/s / 18KiB/s
Events (8,0): 9 entries
Skips: 0 forward (0 -   0.0%)
";

#[test]
fn queue_events_by_default() {
    assert_eq!(
        records(F, RUN),
        [
            on(3, rec(2, 802, 0, TraceOp::Write, 223_490 * 512, 4096)),
            on(1, rec(9, 20_000, 1, TraceOp::Read, 4096 * 512, 256 * 512)),
            on(1, rec(10, 30_000, 1, TraceOp::Flush, 0, 0)),
            on(1, rec(12, 300_000, 1, TraceOp::Trim, 1000 * 512, 2048 * 512)),
            on(2, rec(14, 400_000, 0, TraceOp::Write, 8 * 512, 0)),
        ]
    );
}

#[test]
fn another_action_and_devices_numbered_by_first_event() {
    let options = ReadOptions { format: Some(F), blkparse_action: 'C', ..ReadOptions::default() };
    let got: Vec<_> =
        TraceReader::from_reader("t", RUN.as_bytes(), options).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        got,
        [
            on(3, rec(11, 215_839, 0, TraceOp::Write, 223_490 * 512, 4096)),
            on(1, rec(13, 310_000, 1, TraceOp::Flush, 0, 0))
        ]
    );
    // Device 8,16 first appears on a non-Q line: it is still volume 0 of its own trace.
    let text =
        "  8,16 0 1 0.1 1 G R 8 + 8 [a]\n  8,0 0 2 0.2 1 Q R 16 + 8 [a]\n  8,16 0 3 0.3 1 Q R 24 + 8 [a]\n";
    let got = records(F, text);
    assert_eq!(got.iter().map(|r| r.volume).collect::<Vec<_>>(), [1, 0]);
}

#[test]
fn crlf_comments_huge_offsets_and_unsorted_times() {
    let max = u64::MAX / 512;
    let text = format!(
        "# blkparse -i sda\r\n\r\n  8,0 1 1 5.000000000 9 Q W {max} + 0 [x]\r\n  8,0 1 2 1.000000000 9 Q R {} + 1 [x]\r\n",
        max - 1
    );
    assert_eq!(
        records(F, &text),
        [
            on(1, rec(3, 5_000_000_000, 0, TraceOp::Write, max * 512, 0)),
            on(1, rec(4, 1_000_000_000, 0, TraceOp::Read, (max - 1) * 512, 512)),
        ]
    );
}

#[test]
fn malformed_lines_name_the_field() {
    assert_errors(
        F,
        "",
        &[
            ("8,x 0 1 0.0 1 Q R 8 + 8 [a]", "bad device '8,x'"),
            ("8 0 1 0.0 1 Q R 8 + 8 [a]", "bad device '8'"),
            ("0,657728,8192,r,0.011413", "bad device '0,657728,8192,r,0.011413'"),
            ("8,0 c 1 0.0 1 Q R 8 + 8 [a]", "bad CPU 'c'"),
            ("8,0 0 s 0.0 1 Q R 8 + 8 [a]", "bad sequence 's'"),
            ("8,0 0 1 0.0.1 1 Q R 8 + 8 [a]", "bad time '0.0.1'"),
            ("8,0 0 1 0.0 p Q R 8 + 8 [a]", "bad PID 'p'"),
            ("8,0 0 1 0.0 1", "missing action"),
            ("8,0 0 1 0.0 1 Q", "missing RWBS"),
            ("8,0 0 1 0.0 1 Q X 8 + 8 [a]", "bad RWBS 'X'"),
            ("8,0 0 1 0.0 1 Q RQ 8 + 8 [a]", "bad RWBS 'RQ'"),
            ("8,0 0 1 0.0 1 Q R x8 + 8 [a]", "bad sector 'x8'"),
            ("8,0 0 1 0.0 1 Q R 8 + y [a]", "bad count 'y'"),
            ("8,0 0 1 0.0 1 Q R 8 +", "missing count"),
            (
                "8,0 0 1 0.0 1 Q R 36028797018963968 + 8 [a]",
                "sector '36028797018963968' is too large (does not fit in u64 bytes)",
            ),
            (
                "8,0 0 1 0.0 1 Q R 36028797018963967 + 1 [a]",
                "request end does not fit in u64 bytes (offset 18446744073709551104 + length 512)",
            ),
        ],
    );
}

#[test]
fn a_bad_action_letter_is_refused_up_front() {
    let options = ReadOptions { format: Some(F), blkparse_action: '1', ..ReadOptions::default() };
    let err = TraceReader::from_reader("t", RUN.as_bytes(), options).unwrap_err();
    assert_eq!(err.to_string(), "blkparse action '1' is not a blktrace action letter (such as Q, D or C)");
}
