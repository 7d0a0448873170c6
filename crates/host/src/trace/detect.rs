//! Format detection: which [`TraceFormat`] a line is written in.
//!
//! The reader looks at up to [`DETECT_LINES`] non-empty, non-comment lines from the start and
//! takes the format of the first line that is unambiguously one (so a CSV header row or one
//! corrupt line does not defeat detection; the line itself is still parsed, and reported, later).
//! The formats do not overlap, so the order only matters for speed:
//!
//! 1. `fio version ...` is a fio iolog header;
//! 2. a line the SPC, MSR or MQSim parser accepts as a request is that format (SPC and MSR differ
//!    in the second field, a number or a host name; MQSim is space separated);
//! 3. a line starting `maj,min cpu sequence seconds pid action` is blkparse output.

use super::blkparse;
use super::format::TraceFormat;
use super::iolog;
use super::mqsim::MqsimParser;
use super::msr::MsrParser;
use super::parser::LineParser;
use super::spc::SpcParser;

/// How many non-empty, non-comment lines detection looks at before giving up.
pub(crate) const DETECT_LINES: usize = 32;

/// The format `text` (one non-empty, non-comment line) is unambiguously written in, if any.
pub(crate) fn line_format(text: &[u8]) -> Option<TraceFormat> {
    if iolog::is_header(text) {
        return Some(TraceFormat::Iolog);
    }
    if matches!(SpcParser.parse(0, text), Ok(Some(_))) {
        return Some(TraceFormat::Spc);
    }
    if matches!(MsrParser.parse(0, text), Ok(Some(_))) {
        return Some(TraceFormat::Msr);
    }
    if matches!(MqsimParser.parse(0, text), Ok(Some(_))) {
        return Some(TraceFormat::Mqsim);
    }
    if blkparse::is_event_line(text) {
        return Some(TraceFormat::Blkparse);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_recognised_and_none_is_confused() {
        let cases: [(&str, Option<TraceFormat>); 10] = [
            ("fio version 2 iolog", Some(TraceFormat::Iolog)),
            ("fio version 3 iolog", Some(TraceFormat::Iolog)),
            ("0,657728,8192,r,0.011413", Some(TraceFormat::Spc)),
            ("0,303567,3584,w,0.000000,extra", Some(TraceFormat::Spc)),
            ("128166385295514663,hm,0,Write,9056014336,2048,2833", Some(TraceFormat::Msr)),
            ("11413000 0 657728 16 1", Some(TraceFormat::Mqsim)),
            (
                "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]",
                Some(TraceFormat::Blkparse),
            ),
            (
                "  8,0    0        0     0.003367364     0  m   N cfq workload slice:300",
                Some(TraceFormat::Blkparse),
            ),
            ("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime", None),
            ("/dev/sdb read 0 4096", None),
        ];
        for (line, want) in cases {
            assert_eq!(line_format(line.as_bytes()), want, "{line}");
        }
    }
}
