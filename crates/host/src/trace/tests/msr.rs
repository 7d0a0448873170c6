//! MSR Cambridge edge cases.

use super::*;

const F: TraceFormat = TraceFormat::Msr;

#[test]
fn fields_units_and_types() {
    let text = "128166385295514663,hm,0,Write,9056014336,2048,2833\n\
                128166385295515175,hm,1,Read,5548077056,4096,2320\n\
                128166385295515175,hm,2,read,0,0,0\n";
    assert_eq!(
        records(F, text),
        [
            rec(1, 12_816_638_529_551_466_300, 0, TraceOp::Write, 9_056_014_336, 2048),
            rec(2, 12_816_638_529_551_517_500, 1, TraceOp::Read, 5_548_077_056, 4096),
            rec(3, 12_816_638_529_551_517_500, 2, TraceOp::Read, 0, 0),
        ]
    );
}

#[test]
fn empty_lines_comments_crlf_huge_offsets_and_unsorted_times() {
    let text = "# MSR hm_0\r\n\r\n20,hm,0,Write,18446744073709551000,615,1\r\n  \n10,hm,0,WRITE,1,0,1\r\n";
    assert_eq!(
        records(F, text),
        [
            rec(3, 2000, 0, TraceOp::Write, 18_446_744_073_709_551_000, 615),
            rec(5, 1000, 0, TraceOp::Write, 1, 0)
        ]
    );
}

#[test]
fn malformed_lines_name_the_field() {
    assert_errors(
        F,
        "",
        &[
            ("x,hm,0,Read,0,512,1", "bad Timestamp 'x'"),
            ("1,,0,Read,0,512,1", "bad Hostname ''"),
            ("1,hm,d0,Read,0,512,1", "bad DiskNumber 'd0'"),
            ("1,hm,0,Trim,0,512,1", "bad Type 'Trim'"),
            ("1,hm,0,Read,0x10,512,1", "bad Offset '0x10'"),
            ("1,hm,0,Read,0,512.0,1", "bad Size '512.0'"),
            ("1,hm,0,Read,0,512,fast", "bad ResponseTime 'fast'"),
            ("1,hm,0,Read,0,512", "missing ResponseTime"),
            ("1,hm,0,Read,0,512,1,extra", "unexpected extra field 'extra'"),
            ("1,hm,0", "missing Type"),
            (
                "184467440737095517,hm,0,Read,0,512,1",
                "Timestamp '184467440737095517' is too large (does not fit in u64 nanoseconds)",
            ),
            (
                "1,hm,0,Read,18446744073709551616,512,1",
                "Offset '18446744073709551616' is too large (does not fit in u64 bytes)",
            ),
            (
                "1,hm,0,Read,18446744073709551615,1,1",
                "request end does not fit in u64 bytes (offset 18446744073709551615 + length 1)",
            ),
        ],
    );
}
