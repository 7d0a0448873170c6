//! [`parse_job_file`]: the common INI subset of fio job files.
//!
//! ```text
//! ; comment            # comment too, also after a value (preceded by white space)
//! [global]             options for every job section that follows
//! rw=randwrite
//! [job1]               a job; starts from the [global] options seen so far
//! bs=4k
//! time_based           a bare key is a boolean set to 1
//! ```
//!
//! Several `[global]` sections may appear; each changes the defaults of the jobs after it only.
//! Lines end in LF or CRLF. Not supported, each with its own message: `include`, `$`-expansion
//! (`${VAR}`, `$ncpus`), and the phase options `stonewall`, `new_group` and `wait_for`.

use super::error::JobError;
use super::spec::JobSpec;

/// What is wrong with one line of a job file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The option itself was refused.
    #[error(transparent)]
    Option(#[from] JobError),
    /// An option before the first section.
    #[error("option '{0}' is outside any [section]")]
    OutsideSection(String),
    /// A `[section` without `]`, or `[]`.
    #[error("malformed section header '{0}'")]
    Section(String),
    /// A line that is not a comment, section, `key` or `key=value`.
    #[error("malformed line '{0}': expected 'key=value', 'key', '[section]' or a comment")]
    Malformed(String),
    /// `include` of another file.
    #[error("'include' is not supported: put the included options in this file")]
    Include,
    /// `${VAR}` or `$expression` expansion.
    #[error("'$' expansion is not supported (found in '{0}'): write the value out")]
    Expansion(String),
}

/// A job file that cannot be used, on one line: `job.fio:7: unsupported option 'verify'`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobFileError {
    /// Something wrong on one line (1-based).
    #[error("{file}:{line}: {error}")]
    Line {
        /// The file name, as given to the parser.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong.
        error: LineError,
    },
    /// No job sections at all.
    #[error("{file}: no jobs defined (a job file needs a [section] other than [global])")]
    NoJobs {
        /// The file name, as given to the parser.
        file: String,
    },
}

/// Where options go.
enum Target {
    /// Before any section.
    Nowhere,
    /// Into the defaults for later jobs.
    Global,
    /// Into the last job.
    Job,
}

/// Strips a comment: `;` or `#` at the start of the line or after white space.
fn strip_comment(line: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        if (c == ';' || c == '#') && prev_space {
            return &line[..i];
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// Parses the text of a fio job file into its jobs, in order, with `[global]` options applied.
/// `file` names the file in error messages. Options are applied with [`JobSpec::set`]; the jobs
/// still need [`JobSpec::validate`] against the device.
pub fn parse_job_file(text: &str, file: &str) -> Result<Vec<JobSpec>, JobFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut global = JobSpec::default();
    let mut jobs: Vec<JobSpec> = Vec::new();
    let mut target = Target::Nowhere;
    for (index, raw) in text.lines().enumerate() {
        let fail = |error: LineError| JobFileError::Line { file: file.to_string(), line: index + 1, error };
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if line.contains('$') {
            return Err(fail(LineError::Expansion(line.to_string())));
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name =
                rest.strip_suffix(']').map(str::trim).filter(|n| !n.is_empty() && !n.contains([']', '[']));
            let name = name.ok_or_else(|| fail(LineError::Section(line.to_string())))?;
            target = if name == "global" {
                Target::Global
            } else {
                jobs.push(JobSpec { name: name.to_string(), ..global.clone() });
                Target::Job
            };
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line, None),
        };
        if key == "include" || key.starts_with("include ") {
            return Err(fail(LineError::Include));
        }
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(fail(LineError::Malformed(line.to_string())));
        }
        let spec = match target {
            Target::Nowhere => return Err(fail(LineError::OutsideSection(key.to_string()))),
            Target::Global => &mut global,
            Target::Job => jobs.last_mut().expect("a job section pushed a job"),
        };
        spec.set(key, value).map_err(|e| fail(LineError::Option(e)))?;
    }
    if jobs.is_empty() {
        return Err(JobFileError::NoJobs { file: file.to_string() });
    }
    Ok(jobs)
}
