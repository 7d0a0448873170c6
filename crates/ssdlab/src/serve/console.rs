//! Printing while serving. A device must outlive its log: a message that cannot be written
//! (the terminal closed, `ssdlab serve 2>&1 | head` after `head` exited, a full disk under a
//! redirect) is dropped, and so is every later message to the same stream, instead of the
//! panic `eprintln!` and `println!` raise, which would take the device thread and with it the
//! clients' data and the shutdown checkpoint.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Standard error failed once: nothing more is written to it.
static STDERR_GONE: AtomicBool = AtomicBool::new(false);
/// Standard output failed once.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Writes one line to standard error; returns false (and stays silent from then on) if it
/// could not be written.
pub fn note(line: fmt::Arguments<'_>) -> bool {
    emit(&mut io::stderr().lock(), &STDERR_GONE, line)
}

/// Writes one line to standard output, with the same failure rule as [`note`].
pub fn out(line: fmt::Arguments<'_>) -> bool {
    emit(&mut io::stdout().lock(), &STDOUT_GONE, line)
}

fn emit(w: &mut dyn Write, gone: &AtomicBool, line: fmt::Arguments<'_>) -> bool {
    if gone.load(Ordering::Relaxed) {
        return false;
    }
    let written = w.write_fmt(line).and_then(|()| w.write_all(b"\n")).and_then(|()| w.flush());
    if written.is_err() {
        gone.store(true, Ordering::Relaxed);
    }
    written.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_is_dropped_and_turns_the_stream_off() {
        let gone = AtomicBool::new(false);
        let mut buf = Vec::new();
        assert!(emit(&mut buf, &gone, format_args!("a {}", 1)));
        assert_eq!(buf, b"a 1\n");
        assert!(!emit(&mut Closed, &gone, format_args!("b")));
        assert!(gone.load(Ordering::Relaxed));
        assert!(!emit(&mut buf, &gone, format_args!("c")), "off for good once it failed");
        assert_eq!(buf, b"a 1\n");
    }
}
