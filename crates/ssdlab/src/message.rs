//! One-line error messages: an error and its causes, each said once.
//!
//! Errors here often carry their cause twice: a library error whose text already ends in its
//! source's (`#[error("{path}: {source}")]` with a `source` field), or a context wrapped around
//! such an error. Printing the chain as `anyhow`'s `{:#}` does (`outer: cause: cause's cause`)
//! then says the same thing twice: `x.state: No such file or directory (os error 2): No such
//! file or directory (os error 2)`. [`one_line`] leaves out a cause whose text the message
//! already holds.

use std::error::Error;

/// `e` and its causes, joined by `: `, leaving out any cause whose text is already in the
/// message (because an error before it included it).
pub fn one_line(e: &(dyn Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct Repeats {
        path: String,
        source: std::io::Error,
    }

    #[test]
    fn a_cause_already_in_the_message_is_said_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = anyhow::Error::new(Repeats { path: "x.state".into(), source: io() });
        assert_eq!(format!("{e:#}"), "x.state: no such file: no such file", "what anyhow prints");
        assert_eq!(one_line(e.as_ref()), "x.state: no such file");
        let e = e.context("saving the device");
        assert_eq!(one_line(e.as_ref()), "saving the device: x.state: no such file");
        let e = anyhow::Error::new(io()).context("reading a.fio");
        assert_eq!(one_line(e.as_ref()), "reading a.fio: no such file", "a new cause is kept");
    }
}
