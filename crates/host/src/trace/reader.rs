//! [`TraceReader`]: a trace file as an iterator of [`TraceRecord`]s, streaming.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::iter::FusedIterator;
use std::path::Path;

use super::decompress::{Compression, decompress};
use super::detect::{DETECT_LINES, candidate, line_format};
use super::error::{BadLine, TraceError, shown};
use super::format::TraceFormat;
use super::lines::{Line, LineSource, MAX_LINE_BYTES};
use super::options::ReadOptions;
use super::parser::{LineParser, Parser};
use super::record::TraceRecord;

/// The file read buffer, in bytes.
const FILE_BUFFER_BYTES: usize = 64 * 1024;

/// Reads a block trace one record at a time. Memory does not grow with the trace: one line
/// buffer (at most [`MAX_LINE_BYTES`]), the decompressor's window, and for blkparse and fio
/// iolog a map of at most [`MAX_VOLUMES`](super::MAX_VOLUMES) volume names.
///
/// Each item is a record, or the error that ends the trace: a bad line (unless
/// [`ReadOptions::skip_bad_lines`], which counts it in [`bad_lines`](Self::bad_lines) and goes
/// on), or a read or decompression error (always). After an error the iterator returns `None`.
/// Empty lines, lines of white space and comment lines (`#` first) are skipped silently; lines
/// may end in `\n` or `\r\n`.
///
/// ```
/// use host::trace::{ReadOptions, TraceFormat, TraceOp, TraceReader};
///
/// let text = "# ASU,LBA,Size,Opcode,Timestamp\n0,16,4096,r,0.5\r\n1,8,512,W,0.25\n";
/// let mut trace = TraceReader::from_reader("example.spc", text.as_bytes(), ReadOptions::default())?;
/// assert_eq!(trace.format(), TraceFormat::Spc);
/// let first = trace.next().unwrap()?;
/// assert_eq!((first.line, first.op, first.offset, first.len), (2, TraceOp::Read, 16 * 512, 4096));
/// assert_eq!(first.time_ns, Some(500_000_000));
/// assert_eq!(trace.count(), 1);
/// # Ok::<(), host::trace::TraceError>(())
/// ```
pub struct TraceReader {
    /// The file name errors carry.
    name: String,
    /// The decompressed lines.
    lines: LineSource,
    /// The format's parser.
    parser: Parser,
    /// The format, forced or detected.
    format: TraceFormat,
    /// How the input was compressed.
    compression: Compression,
    /// Whether bad lines are counted and skipped.
    skip_bad_lines: bool,
    /// Bad lines skipped so far.
    bad_lines: u64,
    /// The first bad line skipped.
    first_bad_line: Option<TraceError>,
    /// Records yielded so far.
    records: u64,
    /// Whether the end or an error has been returned.
    done: bool,
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("compression", &self.compression)
            .field("line", &self.lines.number())
            .field("records", &self.records)
            .field("bad_lines", &self.bad_lines)
            .finish_non_exhaustive()
    }
}

/// Whether `text` is neither empty, nor white space, nor a comment.
fn is_content(text: &[u8]) -> bool {
    matches!(text.trim_ascii_start().first(), Some(&b) if b != b'#')
}

impl TraceReader {
    /// Opens the trace at `path`; errors name the file as `path` displays. Reads the first lines
    /// at once to detect the format unless `options` forces one.
    pub fn open(path: &Path, options: ReadOptions) -> Result<Self, TraceError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|error| TraceError::Open { file: name.clone(), error })?;
        Self::from_reader(name, BufReader::with_capacity(FILE_BUFFER_BYTES, file), options)
    }

    /// Reads a trace from `reader` (compressed or not); errors name it `name`.
    pub fn from_reader(
        name: impl Into<String>,
        reader: impl BufRead + Send + 'static,
        options: ReadOptions,
    ) -> Result<Self, TraceError> {
        let name = name.into();
        let action = options.blkparse_action;
        if !action.is_ascii_alphabetic() {
            return Err(TraceError::BlkparseAction(action));
        }
        let (text, compression) = decompress(Box::new(reader)).map_err(|error| TraceError::Read {
            file: name.clone(),
            line: 1,
            error,
        })?;
        let mut lines = LineSource::new(text);
        let format = match options.format {
            Some(format) => format,
            None => detect(&name, &mut lines)?,
        };
        Ok(TraceReader {
            name,
            lines,
            parser: Parser::new(format, action as u8),
            format,
            compression,
            skip_bad_lines: options.skip_bad_lines,
            bad_lines: 0,
            first_bad_line: None,
            records: 0,
            done: false,
        })
    }

    /// The trace's format, as forced or detected.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// How the input was compressed.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The name errors carry (the path as given to [`open`](Self::open)).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many bad lines have been skipped so far (always 0 without
    /// [`ReadOptions::skip_bad_lines`]).
    pub fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    /// The first bad line skipped, as the error it would have been without
    /// [`ReadOptions::skip_bad_lines`].
    pub fn first_bad_line(&self) -> Option<&TraceError> {
        self.first_bad_line.as_ref()
    }

    /// How many records have been yielded so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The number of the last line read (0 before the first).
    pub fn line(&self) -> u64 {
        self.lines.number()
    }
}

/// Detects the format from up to [`DETECT_LINES`] non-empty, non-comment lines, then puts them
/// back so that parsing starts from the first line.
fn detect(name: &str, lines: &mut LineSource) -> Result<TraceFormat, TraceError> {
    let mut saved = Vec::new();
    let mut first: Option<(u64, String)> = None;
    // The first line that looks like a format but does not parse as it, with that error.
    let mut near: Option<(u64, TraceFormat, BadLine)> = None;
    let mut found = None;
    while saved.len() < DETECT_LINES {
        match lines.advance() {
            Ok(true) => {}
            Ok(false) => break,
            Err(error) => {
                return Err(TraceError::Read { file: name.to_string(), line: lines.next_number(), error });
            }
        }
        let format = match lines.line() {
            Line::Text(text) if !is_content(text) => continue,
            Line::Text(text) => {
                first.get_or_insert_with(|| (lines.number(), shown(text.trim_ascii())));
                let format = line_format(text);
                if let (None, None, Some(c)) = (format, &near, candidate(text))
                    && let Err(error) = Parser::new(c, b'Q').parse(lines.number(), text)
                {
                    near = Some((lines.number(), c, error));
                }
                format
            }
            Line::TooLong => {
                first.get_or_insert_with(|| {
                    (lines.number(), format!("<line longer than {MAX_LINE_BYTES} bytes>"))
                });
                None
            }
        };
        saved.push(lines.save());
        if format.is_some() {
            found = format;
            break;
        }
    }
    lines.put_back(saved);
    match (found, near, first) {
        (Some(format), _, _) => Ok(format),
        (None, Some((line, format, error)), _) => {
            Err(TraceError::LooksLike { file: name.to_string(), line, format, error })
        }
        (None, None, Some((line, text))) => {
            Err(TraceError::Undetected { file: name.to_string(), line, text })
        }
        (None, None, None) => Err(TraceError::Empty { file: name.to_string() }),
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            match self.lines.advance() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(error) => {
                    self.done = true;
                    let line = self.lines.next_number();
                    return Some(Err(TraceError::Read { file: self.name.clone(), line, error }));
                }
            }
            let line = self.lines.number();
            let parsed = match self.lines.line() {
                Line::Text(text) if !is_content(text) => continue,
                Line::Text(text) => self.parser.parse(line, text),
                Line::TooLong => Err(BadLine::TooLong(MAX_LINE_BYTES)),
            };
            match parsed {
                Ok(Some(record)) => {
                    self.records += 1;
                    return Some(Ok(record));
                }
                Ok(None) => {}
                Err(error) if self.skip_bad_lines => {
                    self.bad_lines += 1;
                    if self.first_bad_line.is_none() {
                        self.first_bad_line = Some(TraceError::Line { file: self.name.clone(), line, error });
                    }
                }
                Err(error) => {
                    self.done = true;
                    return Some(Err(TraceError::Line { file: self.name.clone(), line, error }));
                }
            }
        }
    }
}

impl FusedIterator for TraceReader {}
