//! What every trace fuzz target checks: reading arbitrary bytes, stopping at the first bad line
//! or skipping bad lines, never panics, and whatever comes out is well formed: increasing line
//! numbers, a time on every record, `offset + len` without overflow, one-line errors, and at
//! most one error (the reader stops after it).

use std::io::Cursor;

use host::trace::{ReadOptions, TraceError, TraceFormat, TraceReader};

/// Reads `data` in `format` (detected if `None`) taking blkparse `action` events, both ways.
pub fn check(data: &[u8], format: Option<TraceFormat>, action: char) {
    for skip_bad_lines in [false, true] {
        let options = ReadOptions { format, skip_bad_lines, blkparse_action: action };
        let reader = match TraceReader::from_reader("fuzz", Cursor::new(data.to_vec()), options) {
            Ok(reader) => reader,
            Err(e) => {
                assert!(format.is_none() || matches!(e, TraceError::Read { .. }), "{e}");
                continue;
            }
        };
        let mut last_line = 0;
        let mut errors = 0;
        for item in reader {
            match item {
                Ok(r) => {
                    assert!(r.line > last_line, "line {} after {last_line}", r.line);
                    last_line = r.line;
                    assert!(r.time_ns.is_some());
                    assert!(r.offset.checked_add(r.len).is_some());
                }
                Err(e) => {
                    errors += 1;
                    assert!(!e.to_string().contains('\n'), "{e}");
                    assert!(!skip_bad_lines || matches!(e, TraceError::Read { .. }), "{e}");
                }
            }
        }
        assert!(errors <= 1);
    }
}
