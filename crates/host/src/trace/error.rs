//! [`TraceError`] and [`BadLine`]: what can go wrong reading a trace, on one line naming the
//! file and, where there is one, the line.

use std::io;

/// What is wrong with one line of a trace. Displays without the file and line, which
/// [`TraceError::Line`] adds: `bad LBA 'x1'`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadLine {
    /// The line ends before a field the format needs (named as the format names it).
    #[error("missing {0}")]
    Missing(&'static str),
    /// A field after the last one the format defines (formats that allow extra fields, such as
    /// SPC, ignore them instead).
    #[error("unexpected extra field '{0}'")]
    Extra(String),
    /// A field that does not parse: not a number, an unknown opcode, action or flag.
    #[error("bad {field} '{value}'")]
    Bad {
        /// The field, as the format names it (`LBA`, `Type`, `RWBS`...).
        field: &'static str,
        /// The field as written (at most 40 characters of it).
        value: String,
    },
    /// A number too large for its field, or whose conversion to bytes or nanoseconds does not
    /// fit in 64 bits (a sector number times 512, FILETIME ticks times 100...).
    #[error("{field} '{value}' is too large (does not fit in {limit})")]
    TooLarge {
        /// The field, as the format names it.
        field: &'static str,
        /// The field as written (at most 40 characters of it).
        value: String,
        /// What it had to fit in: `u32`, `u64 bytes`, `u64 nanoseconds`.
        limit: &'static str,
    },
    /// A request whose end (`offset + len`) does not fit in 64 bits: every record the reader
    /// yields can compute its end without overflow.
    #[error("request end does not fit in u64 bytes (offset {offset} + length {len})")]
    EndOverflow {
        /// The request's offset in bytes.
        offset: u64,
        /// The request's length in bytes.
        len: u64,
    },
    /// A line longer than [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES) (not kept in memory).
    #[error("line longer than {0} bytes")]
    TooLong(usize),
    /// A fio iolog entry before the version header line.
    #[error("fio iolog entry before the 'fio version 2 iolog' or 'fio version 3 iolog' header")]
    NoIologHeader,
    /// A `wait` entry in a version 3 fio iolog (whose timestamps replace it).
    #[error("'wait' is not allowed in a version 3 fio iolog (its timestamps replace it)")]
    WaitInV3,
    /// A device (blkparse) or file name (fio iolog) beyond the first
    /// [`MAX_VOLUMES`](super::MAX_VOLUMES) distinct ones.
    #[error("more than {0} distinct volumes (devices or files)")]
    TooManyVolumes(usize),
}

impl BadLine {
    /// [`BadLine::Bad`] for `field`, quoting `value`.
    pub(crate) fn bad(field: &'static str, value: &[u8]) -> Self {
        BadLine::Bad { field, value: shown(value) }
    }

    /// [`BadLine::TooLarge`] for `field`, quoting `value`.
    pub(crate) fn too_large(field: &'static str, value: &[u8], limit: &'static str) -> Self {
        BadLine::TooLarge { field, value: shown(value), limit }
    }

    /// [`BadLine::Extra`], quoting the first extra field.
    pub(crate) fn extra(value: &[u8]) -> Self {
        BadLine::Extra(shown(value))
    }
}

/// The longest field value an error quotes, in characters.
const SHOWN_CHARS: usize = 40;

/// `bytes` for an error message: lossy UTF-8, control characters escaped, at most
/// [`SHOWN_CHARS`] characters (then `...`), so that an error always stays on one line.
pub(crate) fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == SHOWN_CHARS {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A trace that cannot be opened, read or parsed. Every variant displays on one line that
/// names the file (as given to [`TraceReader`](super::TraceReader)) and, for problems on a line,
/// the line number from 1: `websearch.spc:17: bad LBA 'x1'`.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened.
    #[error("{file}: {error}")]
    Open {
        /// The file name.
        file: String,
        /// Why.
        error: io::Error,
    },
    /// Reading or decompressing failed while reading line `line` (a truncated or corrupt
    /// compressed stream, a failing disk).
    #[error("{file}:{line}: read error: {error}")]
    Read {
        /// The file name.
        file: String,
        /// The line being read, from 1.
        line: u64,
        /// Why.
        error: io::Error,
    },
    /// A line that does not parse in the trace's format.
    #[error("{file}:{line}: {error}")]
    Line {
        /// The file name.
        file: String,
        /// The line, from 1 (lines of the decompressed text; empty and comment lines count).
        line: u64,
        /// What is wrong with it.
        error: BadLine,
    },
    /// No format was forced, none of the first lines is a record of any format, but one has the
    /// shape of a format (its separators and fields) and does not parse as it: that format's
    /// error on the first such line, as forcing the format would give it.
    #[error("{file}:{line}: {error} (the line looks like {format}; --format forces a format)")]
    LooksLike {
        /// The file name.
        file: String,
        /// The line, from 1.
        line: u64,
        /// The format it looks like.
        format: super::TraceFormat,
        /// What is wrong with it in that format.
        error: BadLine,
    },
    /// No format was forced and none of the first lines looks like any supported format.
    #[error(
        "{file}: cannot detect the trace format (line {line}: '{text}'); \
         force one of spc, msr, mqsim, blkparse, iolog"
    )]
    Undetected {
        /// The file name.
        file: String,
        /// The first non-empty, non-comment line.
        line: u64,
        /// Its start.
        text: String,
    },
    /// No format was forced and the trace has no lines other than empty ones and comments.
    #[error("{file}: empty trace (no lines to detect the format from); force a format to read it")]
    Empty {
        /// The file name.
        file: String,
    },
    /// [`ReadOptions::blkparse_action`](super::ReadOptions::blkparse_action) is not an ASCII
    /// letter, so it can match no blkparse event.
    #[error("blkparse action '{0}' is not a blktrace action letter (such as Q, D or C)")]
    BlkparseAction(char),
}
