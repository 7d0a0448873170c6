//! Format detection: which [`TraceFormat`] a line is written in.
//!
//! The reader looks at up to [`DETECT_LINES`] non-empty, non-comment lines from the start and
//! takes the format of the first line that is unambiguously one (so a CSV header row or one
//! corrupt line does not defeat detection; the line itself is still parsed, and reported, later).
//! The formats do not overlap, so the order only matters for speed:
//!
//! 1. `ssdlab record ...` is an ssdlab recording's header, `fio version ...` a fio iolog's;
//! 2. a line the SPC, MSR or MQSim parser accepts as a request is that format (SPC and MSR differ
//!    in the second field, a number or a host name; MQSim is space separated);
//! 3. a line starting `maj,min cpu sequence seconds pid action` is blkparse output.

use super::blkparse;
use super::fields;
use super::format::TraceFormat;
use super::iolog;
use super::mqsim::MqsimParser;
use super::msr::MsrParser;
use super::parser::LineParser;
use super::recording;
use super::spc::SpcParser;

/// How many non-empty, non-comment lines detection looks at before giving up.
pub(crate) const DETECT_LINES: usize = 32;

/// The format a line that no parser accepts looks like it is written in, from its shape alone,
/// so that detection can report that format's own error on it (`LBA '...' is too large`)
/// instead of only that it recognised nothing:
///
/// - comma separated, at least five fields, the second all digits: SPC (`ASU,LBA,...`);
/// - comma separated, seven fields, the first all digits: MSR (`Timestamp,Hostname,...`);
/// - five fields separated by white space, at least four of them all digits: MQSim.
///
/// A header row (`Timestamp,Hostname,...`) has no all-digit field where these need one, so it
/// looks like nothing.
pub(crate) fn candidate(text: &[u8]) -> Option<TraceFormat> {
    let digits = |f: &[u8]| !f.is_empty() && f.iter().all(u8::is_ascii_digit);
    if text.contains(&b',') {
        let fields: Vec<&[u8]> = fields::commas(text).collect();
        if fields.len() >= 5 && digits(fields[1]) {
            return Some(TraceFormat::Spc);
        }
        if fields.len() == 7 && digits(fields[0]) {
            return Some(TraceFormat::Msr);
        }
        return None;
    }
    let words: Vec<&[u8]> = fields::words(text).collect();
    (words.len() == 5 && words.iter().filter(|w| digits(w)).count() >= 4).then_some(TraceFormat::Mqsim)
}

/// The format `text` (one non-empty, non-comment line) is unambiguously written in, if any.
pub(crate) fn line_format(text: &[u8]) -> Option<TraceFormat> {
    if recording::is_header(text) {
        return Some(TraceFormat::Recording);
    }
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
        let cases: [(&str, Option<TraceFormat>); 12] = [
            (super::super::recording::RECORDING_HEADER, Some(TraceFormat::Recording)),
            ("ssdlab record 2: t_ns", Some(TraceFormat::Recording)),
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

    #[test]
    fn a_line_no_parser_accepts_still_looks_like_one_format_or_none() {
        let cases: [(&str, Option<TraceFormat>); 8] = [
            ("0,999999999999999999999,4096,r,0.1", Some(TraceFormat::Spc)),
            ("x,8,4096,r,0.1", Some(TraceFormat::Spc)),
            ("0,8,4096,read,0.1,extra", Some(TraceFormat::Spc)),
            ("128166385295514663,hm,0,Write,9056014336,2048,x", Some(TraceFormat::Msr)),
            ("11413000 0 99999999999999999999999 16 1", Some(TraceFormat::Mqsim)),
            ("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime", None),
            ("hello world", None),
            ("0,8,4096", None),
        ];
        for (line, want) in cases {
            assert_eq!(line_format(line.as_bytes()), None, "{line}");
            assert_eq!(candidate(line.as_bytes()), want, "{line}");
        }
    }
}
