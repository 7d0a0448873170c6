//! [`ReadOptions`]: how to read a trace.

use serde::{Deserialize, Serialize};

use super::format::TraceFormat;

/// How a [`TraceReader`](super::TraceReader) reads a trace. Every field has a default, so a
/// config may name only what it changes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadOptions {
    /// The trace's format, or `None` to detect it from the first non-empty, non-comment lines.
    /// Default: `None` (detect).
    pub format: Option<TraceFormat>,
    /// Count and skip lines that do not parse (see
    /// [`TraceReader::bad_lines`](super::TraceReader::bad_lines)) instead of stopping at the
    /// first with an error. Read and decompression errors stop the reader either way.
    /// Default: `false` (stop).
    pub skip_bad_lines: bool,
    /// The one blkparse action whose events become records; the others (and message lines) are
    /// skipped. `Q` (queued) sees every request as the file system or application submitted it;
    /// `D` (issued to the driver) sees them after merging and splitting; `C` (completed) is
    /// stamped with completion times. An ASCII letter, matched case-sensitively.
    /// Default: `'Q'`.
    pub blkparse_action: char,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { format: None, skip_bad_lines: false, blkparse_action: 'Q' }
    }
}

impl ReadOptions {
    /// The default options with `format` forced.
    pub fn with_format(format: TraceFormat) -> Self {
        ReadOptions { format: Some(format), ..ReadOptions::default() }
    }
}
