//! Block-trace readers: real traces as a stream of [`TraceRecord`]s for the replay driver.
//!
//! ```text
//!   file ──magic bytes──> gzip / bzip2 / zstd / plain ──lines──> format parser ──> TraceRecord
//!   (TraceReader::open)   (Compression)                (≤ MAX_LINE_BYTES)  (TraceFormat,       { line, time_ns,
//!                                                                           forced or           volume, op,
//!                                                                           detected)           offset, len }
//! ```
//!
//! A [`TraceReader`] is an iterator of `Result<TraceRecord, TraceError>`. It streams: memory
//! does not grow with the trace. Records carry byte offsets and lengths exactly as the trace
//! says (sector formats times 512; no alignment, no folding into a capacity, zero lengths kept)
//! and the time in nanoseconds in the trace's own epoch; mapping them onto a device is the
//! replayer's job.
//!
//! | format | line | volume | time (`time_ns`) | units |
//! |---|---|---|---|---|
//! | [`spc`](TraceFormat::Spc) | `ASU,LBA,Size,Opcode,Timestamp[,...]` | ASU | seconds since start | LBA sectors, Size bytes, `r`/`w` any case |
//! | [`msr`](TraceFormat::Msr) | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | DiskNumber | FILETIME: ns since 1601 | bytes, `Read`/`Write` |
//! | [`mqsim`](TraceFormat::Mqsim) | `arrival_ns device lba sectors type` | device | as written | sectors, type 1 read / 0 write |
//! | [`blkparse`](TraceFormat::Blkparse) | `maj,min cpu seq secs pid action rwbs sector + count ...` | per `maj,min`, first-appearance order | seconds since start | sectors; one action (default `Q`) |
//! | [`iolog`](TraceFormat::Iolog) | v2 `file action [offset len]`, v3 `usecs file action [offset len]` | per file, first-appearance order | v2: sum of `wait`s (µs); v3: timestamp (µs) | bytes |
//! | [`recording`](TraceFormat::Recording) | `t_ns conn queue op offset len flags status latency_ns device_ns` after its header | 0 | ns since the server started | bytes |
//!
//! Each format's module documents its rules: `blkparse` which lines it takes and how RWBS maps
//! to operations, `iolog` its header, actions and clocks.
//!
//! ## Rules common to every format
//!
//! 1. **Compression** is detected from the first bytes ([`Compression`]), never from the name.
//! 2. **Format**: forced by [`ReadOptions::format`] ([`TraceFormat`] parses `spc`, `msr`,
//!    `mqsim`/`disksim`, `blkparse`, `iolog`, `recording`), or detected from the first non-empty,
//!    non-comment lines: the first of up to 32 that is unambiguously one format decides.
//! 3. **Lines** end in `\n` or `\r\n` (a UTF-8 byte order mark before the first is dropped);
//!    empty lines, white space and comments (`#` first) are skipped; numbers are decimal digits
//!    only. A line longer than [`MAX_LINE_BYTES`] is a bad line.
//! 4. **Bad lines** (a field missing, not a number, an unknown opcode, a number or a byte offset
//!    that overflows 64 bits, `offset + len` past `u64::MAX`) stop the reader with
//!    [`TraceError::Line`], `file:line: what` (`websearch.spc:17: bad LBA 'x1'`), or with
//!    [`ReadOptions::skip_bad_lines`] are counted ([`TraceReader::bad_lines`]) and skipped.
//! 5. **Zero-length requests** are records like any other (the replayer counts them);
//!    **unsorted timestamps** are yielded as they are.

mod blkparse;
mod decompress;
mod detect;
mod error;
mod fields;
mod format;
mod iolog;
mod lines;
mod mqsim;
mod msr;
mod options;
mod parser;
mod reader;
mod record;
mod recording;
mod spc;
mod volumes;

#[cfg(test)]
mod tests;

pub use decompress::Compression;
pub use error::{BadLine, TraceError};
pub use format::{TraceFormat, UnknownFormat};
pub use lines::MAX_LINE_BYTES;
pub use options::ReadOptions;
pub use reader::TraceReader;
pub use record::{TraceOp, TraceRecord};
pub use recording::{RECORDING_HEADER, Recorded, RecordedOp};
pub use volumes::MAX_VOLUMES;
