//! [`LineParser`], the seam between the reader and one format, and [`Parser`], the closed set
//! of them chosen by [`TraceFormat`].

use super::blkparse::BlkparseParser;
use super::error::BadLine;
use super::format::TraceFormat;
use super::iolog::IologParser;
use super::mqsim::MqsimParser;
use super::msr::MsrParser;
use super::record::TraceRecord;
use super::recording::RecordingParser;
use super::spc::SpcParser;

/// One format's line parser.
///
/// The [`TraceReader`](super::TraceReader) calls [`parse`](Self::parse) once per line, in file
/// order, with the line's number and its text without the line ending; it has already skipped
/// empty lines, lines of white space and comments (`#` first). The implementer:
///
/// - returns `Ok(Some(record))` for a request, `Ok(None)` for a valid line that is no request
///   (a header, a file action, a wait, another blkparse action), `Err` for a bad line;
/// - must not panic on any bytes, must not allocate on the success path where it can avoid it,
///   and keeps only bounded state (a volume map, a clock);
/// - must leave its state as it was when it returns `Err`, so that skipping a bad line is the
///   same as the line never having been there;
/// - guarantees `offset + len` of every record fits in a `u64`.
pub(crate) trait LineParser {
    /// Parses line `line` (from 1) whose text is `text`.
    fn parse(&mut self, line: u64, text: &[u8]) -> Result<Option<TraceRecord>, BadLine>;
}

/// The parser of each format ("generics inside, enum outside": the reader holds this enum).
#[derive(Debug)]
pub(crate) enum Parser {
    /// SPC.
    Spc(SpcParser),
    /// MSR Cambridge.
    Msr(MsrParser),
    /// MQSim / DiskSim ASCII.
    Mqsim(MqsimParser),
    /// blkparse text.
    Blkparse(BlkparseParser),
    /// fio iolog v2 / v3.
    Iolog(IologParser),
    /// ssdlab recordings.
    Recording(RecordingParser),
}

impl Parser {
    /// A fresh parser for `format`; `blkparse_action` is an ASCII letter.
    pub(crate) fn new(format: TraceFormat, blkparse_action: u8) -> Self {
        match format {
            TraceFormat::Spc => Parser::Spc(SpcParser),
            TraceFormat::Msr => Parser::Msr(MsrParser),
            TraceFormat::Mqsim => Parser::Mqsim(MqsimParser),
            TraceFormat::Blkparse => Parser::Blkparse(BlkparseParser::new(blkparse_action)),
            TraceFormat::Iolog => Parser::Iolog(IologParser::default()),
            TraceFormat::Recording => Parser::Recording(RecordingParser::default()),
        }
    }
}

impl LineParser for Parser {
    #[inline]
    fn parse(&mut self, line: u64, text: &[u8]) -> Result<Option<TraceRecord>, BadLine> {
        match self {
            Parser::Spc(p) => p.parse(line, text),
            Parser::Msr(p) => p.parse(line, text),
            Parser::Mqsim(p) => p.parse(line, text),
            Parser::Blkparse(p) => p.parse(line, text),
            Parser::Iolog(p) => p.parse(line, text),
            Parser::Recording(p) => p.parse(line, text),
        }
    }
}
