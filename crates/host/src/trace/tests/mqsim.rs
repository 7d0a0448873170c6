//! MQSim / DiskSim ASCII edge cases.

use super::*;

const F: TraceFormat = TraceFormat::Mqsim;

#[test]
fn fields_units_and_types() {
    let text = "11413000 0 657728 16 1\n938513000\t4 264719034 16 0\n  5   2   0   0   1  \n";
    assert_eq!(
        records(F, text),
        [
            rec(1, 11_413_000, 0, TraceOp::Read, 657_728 * 512, 8192),
            rec(2, 938_513_000, 4, TraceOp::Write, 264_719_034 * 512, 8192),
            rec(3, 5, 2, TraceOp::Read, 0, 0),
        ]
    );
}

#[test]
fn empty_lines_comments_crlf_huge_offsets_and_unsorted_times() {
    let max_lba = u64::MAX / 512;
    let text = format!("#time dev lba size type\r\n\r\n900 0 {max_lba} 0 0\r\n100 1 {} 1 1\r\n", max_lba - 1);
    assert_eq!(
        records(F, &text),
        [
            rec(3, 900, 0, TraceOp::Write, max_lba * 512, 0),
            rec(4, 100, 1, TraceOp::Read, (max_lba - 1) * 512, 512)
        ]
    );
}

#[test]
fn malformed_lines_name_the_field() {
    assert_errors(
        F,
        "",
        &[
            ("1.5 0 0 8 1", "bad arrival time '1.5'"),
            ("1 x 0 8 1", "bad device 'x'"),
            ("1 0 x1 8 1", "bad start LBA 'x1'"),
            ("1 0 0 -8 1", "bad size '-8'"),
            ("1 0 0 8 2", "bad type '2'"),
            ("1 0 0 8 R", "bad type 'R'"),
            ("1 0 0 8", "missing type"),
            ("1 0 0 8 1 9", "unexpected extra field '9'"),
            ("1,0,0,8,1", "bad arrival time '1,0,0,8,1'"),
            (
                "1 0 36028797018963968 8 1",
                "start LBA '36028797018963968' is too large (does not fit in u64 bytes)",
            ),
            (
                "1 0 0 36028797018963968 1",
                "size '36028797018963968' is too large (does not fit in u64 bytes)",
            ),
            (
                "1 0 36028797018963967 1 1",
                "request end does not fit in u64 bytes (offset 18446744073709551104 + length 512)",
            ),
            (
                "18446744073709551616 0 0 8 1",
                "arrival time '18446744073709551616' is too large (does not fit in u64 nanoseconds)",
            ),
        ],
    );
}
