//! SPC edge cases.

use super::*;

const F: TraceFormat = TraceFormat::Spc;

#[test]
fn fields_units_and_opcodes() {
    let text = "0,657728,8192,r,0.011413\n1,0,512,W,1.5\n23,10,0,R,2\n7,3,4096,w,.25\n";
    assert_eq!(
        records(F, text),
        [
            rec(1, 11_413_000, 0, TraceOp::Read, 657_728 * 512, 8192),
            rec(2, 1_500_000_000, 1, TraceOp::Write, 0, 512),
            rec(3, 2_000_000_000, 23, TraceOp::Read, 5120, 0),
            rec(4, 250_000_000, 7, TraceOp::Write, 1536, 4096),
        ]
    );
}

#[test]
fn empty_lines_comments_crlf_padding_and_extra_fields() {
    let text = "\n# ASU,LBA,Size,Opcode,Timestamp\r\n   \n0,1,512,r,0.1\r\n\t# indented comment\n \
                2 , 4 , 1024 , w , 0.2 \r\n\r\n3,5,512,r,0.3,extra,fields,42\n";
    assert_eq!(
        records(F, text),
        [
            rec(4, 100_000_000, 0, TraceOp::Read, 512, 512),
            rec(6, 200_000_000, 2, TraceOp::Write, 2048, 1024),
            rec(8, 300_000_000, 3, TraceOp::Read, 2560, 512),
        ]
    );
}

#[test]
fn huge_offsets_zero_sizes_and_unsorted_times_are_kept() {
    let max_lba = u64::MAX / 512;
    let text = format!("0,{max_lba},0,w,5.0\n0,{},511,r,1.0\n0,7,0,r,0.000000001\n", max_lba - 1);
    assert_eq!(
        records(F, &text),
        [
            rec(1, 5_000_000_000, 0, TraceOp::Write, max_lba * 512, 0),
            rec(2, 1_000_000_000, 0, TraceOp::Read, (max_lba - 1) * 512, 511),
            rec(3, 1, 0, TraceOp::Read, 3584, 0),
        ]
    );
}

#[test]
fn malformed_lines_name_the_field() {
    let max_lba = u64::MAX / 512;
    assert_errors(
        F,
        "",
        &[
            ("x1,0,512,r,0", "bad ASU 'x1'"),
            ("0,x1,512,r,0", "bad LBA 'x1'"),
            ("0,-5,512,r,0", "bad LBA '-5'"),
            ("0,1,5k,r,0", "bad Size '5k'"),
            ("0,1,512,x,0", "bad Opcode 'x'"),
            ("0,1,512,read,0", "bad Opcode 'read'"),
            ("0,1,512,r,1e-3", "bad Timestamp '1e-3'"),
            ("0,1,512,r,-0.5", "bad Timestamp '-0.5'"),
            ("0,1,512,r,", "bad Timestamp ''"),
            ("0,1,512,r", "missing Timestamp"),
            ("0,1", "missing Size"),
            ("0", "missing LBA"),
            ("4294967296,1,512,r,0", "ASU '4294967296' is too large (does not fit in u32)"),
            (
                &format!("0,{},512,r,0", max_lba + 1),
                "LBA '36028797018963968' is too large (does not fit in u64 bytes)",
            ),
            (
                "0,99999999999999999999,512,r,0",
                "LBA '99999999999999999999' is too large (does not fit in u64 bytes)",
            ),
            (
                "0,1,18446744073709551616,r,0",
                "Size '18446744073709551616' is too large (does not fit in u64 bytes)",
            ),
            (
                &format!("0,{max_lba},512,r,0"),
                "request end does not fit in u64 bytes (offset 18446744073709551104 + length 512)",
            ),
            (
                "0,1,512,r,18446744074",
                "Timestamp '18446744074' is too large (does not fit in u64 nanoseconds)",
            ),
        ],
    );
}
