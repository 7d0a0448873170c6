//! [`LineSource`]: the lines of a byte stream, one at a time, in one reused buffer that never
//! grows past [`MAX_LINE_BYTES`], whatever the input. Lines read ahead for format detection
//! can be put back.

use std::collections::VecDeque;
use std::io::{self, BufRead};

/// The longest line the reader keeps, in bytes (without the line ending). A longer line is a
/// bad line ([`BadLine::TooLong`](super::BadLine::TooLong)) and is skipped without being held
/// in memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The byte order mark some Windows tools put at the start of a UTF-8 text file.
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// One line, as the reader sees it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// The line's text, without `\n` or `\r\n`.
    Text(&'a [u8]),
    /// A line longer than [`MAX_LINE_BYTES`]; its text was dropped.
    TooLong,
}

/// A line read ahead and put back.
#[derive(Debug)]
pub(crate) struct Saved {
    /// Its number.
    number: u64,
    /// Its text, or `None` if it was too long.
    text: Option<Vec<u8>>,
}

/// Lines of a byte stream, numbered from 1.
pub(crate) struct LineSource {
    /// The (decompressed) text.
    inner: Box<dyn BufRead + Send>,
    /// The current line's bytes (possibly ending in `\r`).
    buf: Vec<u8>,
    /// Whether the current line was too long (and `buf` is empty).
    too_long: bool,
    /// The current line's number.
    number: u64,
    /// How many lines have been read from `inner`.
    read: u64,
    /// Lines put back, to be returned before reading more.
    ahead: VecDeque<Saved>,
}

impl LineSource {
    /// Lines of `inner`.
    pub(crate) fn new(inner: Box<dyn BufRead + Send>) -> Self {
        LineSource { inner, buf: Vec::new(), too_long: false, number: 0, read: 0, ahead: VecDeque::new() }
    }

    /// Moves to the next line: `Ok(false)` at the end of the input. An error leaves the line
    /// being read unfinished; its number is [`next_number`](Self::next_number).
    pub(crate) fn advance(&mut self) -> io::Result<bool> {
        if let Some(saved) = self.ahead.pop_front() {
            self.number = saved.number;
            self.too_long = saved.text.is_none();
            self.buf = saved.text.unwrap_or_default();
            return Ok(true);
        }
        self.buf.clear();
        self.too_long = false;
        let mut any = false;
        loop {
            let avail = match self.inner.fill_buf() {
                Ok(avail) => avail,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                break;
            }
            any = true;
            let (chunk, used, done) = match avail.iter().position(|&b| b == b'\n') {
                Some(end) => (&avail[..end], end + 1, true),
                None => (avail, avail.len(), false),
            };
            if !self.too_long {
                if self.buf.len() + chunk.len() > MAX_LINE_BYTES {
                    self.too_long = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(chunk);
                }
            }
            self.inner.consume(used);
            if done {
                break;
            }
        }
        if any {
            self.read += 1;
            self.number = self.read;
        }
        Ok(any)
    }

    /// The number of the current line, from 1.
    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    /// The number the next line read from the input will have.
    pub(crate) fn next_number(&self) -> u64 {
        self.read + 1
    }

    /// The current line (without a UTF-8 byte order mark, if the first line starts with one).
    pub(crate) fn line(&self) -> Line<'_> {
        if self.too_long {
            return Line::TooLong;
        }
        let text = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
        if self.number == 1 {
            return Line::Text(text.strip_prefix(UTF8_BOM).unwrap_or(text));
        }
        Line::Text(text)
    }

    /// A copy of the current line, to [`put_back`](Self::put_back) later.
    pub(crate) fn save(&self) -> Saved {
        Saved { number: self.number, text: (!self.too_long).then(|| self.buf.clone()) }
    }

    /// Makes `lines` (saved in order, all read after any line already put back) the next ones
    /// [`advance`](Self::advance) returns.
    pub(crate) fn put_back(&mut self, lines: Vec<Saved>) {
        self.ahead.extend(lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `input`, read through a reader that returns `chunk` bytes at a time.
    fn lines(input: &[u8], chunk: usize) -> Vec<(u64, Option<Vec<u8>>)> {
        let reader = io::BufReader::with_capacity(chunk, io::Cursor::new(input.to_vec()));
        let mut src = LineSource::new(Box::new(reader));
        let mut out = Vec::new();
        while src.advance().unwrap() {
            let text = match src.line() {
                Line::Text(t) => Some(t.to_vec()),
                Line::TooLong => None,
            };
            out.push((src.number(), text));
        }
        out
    }

    #[test]
    fn endings_chunks_and_the_length_bound() {
        let long = vec![b'x'; MAX_LINE_BYTES + 1];
        let exact = vec![b'y'; MAX_LINE_BYTES];
        let mut input = b"\xef\xbb\xbfa\r\nb\n\n".to_vec();
        input.extend_from_slice(&long);
        input.push(b'\n');
        input.extend_from_slice(&exact);
        input.extend_from_slice(b"\nlast");
        for chunk in [1, 3, 7, 4096, 1 << 20] {
            let got = lines(&input, chunk);
            let want = vec![
                (1, Some(b"a".to_vec())),
                (2, Some(b"b".to_vec())),
                (3, Some(vec![])),
                (4, None),
                (5, Some(exact.clone())),
                (6, Some(b"last".to_vec())),
            ];
            assert_eq!(got, want, "chunk {chunk}");
        }
        assert!(lines(b"", 8).is_empty());
        assert_eq!(lines(b"\n", 8), [(1, Some(vec![]))]);
    }

    #[test]
    fn put_back_lines_come_first_with_their_numbers() {
        let mut src = LineSource::new(Box::new(io::Cursor::new(b"one\ntwo\nthree\n".to_vec())));
        let mut saved = Vec::new();
        for _ in 0..2 {
            assert!(src.advance().unwrap());
            saved.push(src.save());
        }
        src.put_back(saved);
        let mut got = Vec::new();
        while src.advance().unwrap() {
            let Line::Text(t) = src.line() else { panic!("too long") };
            got.push((src.number(), String::from_utf8(t.to_vec()).unwrap()));
        }
        assert_eq!(got, [(1, "one".into()), (2, "two".into()), (3, "three".into())]);
    }
}
