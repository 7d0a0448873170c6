//! fio iolog edge cases.

use super::*;

const F: TraceFormat = TraceFormat::Iolog;

#[test]
fn version_2_waits_advance_the_clock() {
    let text = "fio version 2 iolog\n/dev/sdb add\n/dev/sdc add\n/dev/sdb open\n/dev/sdb write 0 4096\n\
                /dev/sdb wait 1500 0\n/dev/sdc read 4096 512\n/dev/sdb wait 20\n/dev/sdb trim 8192 0\n\
                /dev/sdc sync 0 0\n/dev/sdb datasync\n/dev/sdb close\n";
    assert_eq!(
        records(F, text),
        [
            rec(5, 0, 0, TraceOp::Write, 0, 4096),
            rec(7, 1_500_000, 1, TraceOp::Read, 4096, 512),
            rec(9, 1_520_000, 0, TraceOp::Trim, 8192, 0),
            rec(10, 1_520_000, 1, TraceOp::Flush, 0, 0),
            rec(11, 1_520_000, 0, TraceOp::Flush, 0, 0),
        ]
    );
}

#[test]
fn version_3_timestamps_are_microseconds_and_kept_unsorted() {
    let text = "fio version 3 iolog\r\n# a comment\r\n\r\n2 Nvme1n1 add\r\n872 Nvme1n1 open\r\n\
                878 Nvme1n1 write 0 16384\r\n500 other read 18446744073709551615 0\r\n\
                10001677 Nvme1n1 close\r\n";
    assert_eq!(
        records(F, text),
        [rec(6, 878_000, 0, TraceOp::Write, 0, 16384), rec(7, 500_000, 1, TraceOp::Read, u64::MAX, 0)]
    );
}

#[test]
fn malformed_lines_name_the_field() {
    assert_errors(
        F,
        "fio version 2 iolog\n",
        &[
            ("/dev/sdb", "missing action"),
            ("/dev/sdb frobnicate 0 1", "bad action 'frobnicate'"),
            ("/dev/sdb read 0", "missing length"),
            ("/dev/sdb read", "missing offset"),
            ("/dev/sdb read x 1", "bad offset 'x'"),
            ("/dev/sdb write 0 -1", "bad length '-1'"),
            ("/dev/sdb read 0 1 2", "unexpected extra field '2'"),
            ("/dev/sdb add 0 1", "unexpected extra field '0'"),
            ("/dev/sdb sync 0", "missing length"),
            ("/dev/sdb wait", "missing delay"),
            ("/dev/sdb wait 1.5 0", "bad delay '1.5'"),
            (
                "/dev/sdb wait 18446744073709552 0",
                "delay '18446744073709552' is too large (does not fit in u64 nanoseconds)",
            ),
            (
                "/dev/sdb read 18446744073709551616 1",
                "offset '18446744073709551616' is too large (does not fit in u64 bytes)",
            ),
            (
                "/dev/sdb write 18446744073709551615 1",
                "request end does not fit in u64 bytes (offset 18446744073709551615 + length 1)",
            ),
            ("fio version 2 iolog", "bad action 'version'"),
        ],
    );
    assert_errors(
        F,
        "fio version 3 iolog\n",
        &[
            ("/dev/sdb read 0 1", "bad timestamp '/dev/sdb'"),
            (
                "5 /dev/sdb wait 100 0",
                "'wait' is not allowed in a version 3 fio iolog (its timestamps replace it)",
            ),
            ("5", "missing filename"),
            (
                "18446744073709552 f read 0 1",
                "timestamp '18446744073709552' is too large (does not fit in u64 nanoseconds)",
            ),
        ],
    );
    assert_errors(
        F,
        "",
        &[
            (
                "/dev/sdb read 0 1",
                "fio iolog entry before the 'fio version 2 iolog' or 'fio version 3 iolog' header",
            ),
            ("fio version 1 iolog", "bad iolog header 'fio version 1 iolog'"),
            ("fio version 3 iolog trailing", "bad iolog header 'fio version 3 iolog trailing'"),
        ],
    );
}

#[test]
fn the_wait_clock_overflowing_is_a_bad_line() {
    let wait = u64::MAX / 1000;
    let text = format!("fio version 2 iolog\nf wait {wait} 0\nf wait {wait} 0\n");
    assert_eq!(
        error(F, &text),
        format!("t:3: delay '{wait}' is too large (does not fit in u64 nanoseconds)")
    );
}
