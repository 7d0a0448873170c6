//! The workload of a run: fio options on top of `ssdlab run`'s defaults, or a job file (whose
//! every job then takes the options too).

use std::path::PathBuf;

use host::workload::{JobError, JobFileError, JobSpec, parse_job_file};

/// The workload `ssdlab run` runs when no option is given: 4 jobs of 4 KiB random I/O, 70%
/// reads, queue depth 32, 50,000 I/Os each, over the first 8 GiB.
pub const DEFAULT_JOB: [(&str, &str); 7] = [
    ("rw", "randrw"),
    ("rwmixread", "70"),
    ("bs", "4k"),
    ("iodepth", "32"),
    ("numjobs", "4"),
    ("number_ios", "50000"),
    ("size", "8g"),
];

/// The defaults kept when any option is given (the others are fio's).
const KEPT: [&str; 5] = ["rw", "bs", "iodepth", "numjobs", "number_ios"];

/// One fio option, with how the user wrote it (for errors).
#[derive(Clone, Debug, PartialEq)]
pub struct JobOption {
    /// The fio option name, e.g. `rw`.
    pub key: String,
    /// Its value; `None` for a flag such as `time_based`.
    pub value: Option<String>,
    /// Where it came from, e.g. `--rw` or `axis workload.rw`; errors start with it.
    pub label: String,
}

/// A workload as given: a job file or the default job, and options applied in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadSpec {
    /// A fio job file; `None`: one job named `default`.
    pub job_file: Option<PathBuf>,
    /// Options applied to every job, in order.
    pub options: Vec<JobOption>,
}

/// Why a workload could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The job file could not be read.
    #[error("reading {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The job file has a bad line.
    #[error(transparent)]
    JobFile(#[from] JobFileError),
    /// The job file has no job section.
    #[error("{}: no jobs (a job is a [section] after [global])", .0.display())]
    NoJobs(PathBuf),
    /// An option is unknown or its value is bad.
    #[error("{label}: {source}")]
    Option {
        /// Where the option came from.
        label: String,
        /// What is wrong.
        source: JobError,
    },
}

impl WorkloadSpec {
    /// Whether nothing was given (the default job runs).
    pub fn is_default(&self) -> bool {
        self.job_file.is_none() && self.options.is_empty()
    }

    /// The jobs: those of the job file, or the default job (all of [`DEFAULT_JOB`] if no
    /// option is given, else its rw, bs, iodepth, numjobs and number_ios), with every option
    /// applied. Giving `runtime` or `time_based` but not `number_ios` lifts the default I/O
    /// count, so that the run is bounded by time.
    pub fn jobs(&self) -> Result<Vec<JobSpec>, WorkloadError> {
        let mut jobs = match &self.job_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|source| WorkloadError::Io { path: path.clone(), source })?;
                let jobs = parse_job_file(&text, &path.display().to_string())?;
                if jobs.is_empty() {
                    return Err(WorkloadError::NoJobs(path.clone()));
                }
                jobs
            }
            None => {
                let mut job = JobSpec::new("default");
                let all = self.options.is_empty();
                for (k, v) in DEFAULT_JOB.iter().filter(|(k, _)| all || KEPT.contains(k)) {
                    job.set(k, Some(v)).expect("default options are valid");
                }
                vec![job]
            }
        };
        for job in &mut jobs {
            for o in &self.options {
                job.set(&o.key, o.value.as_deref())
                    .map_err(|source| WorkloadError::Option { label: o.label.clone(), source })?;
            }
        }
        let given = |key: &str| self.options.iter().any(|o| o.key == key);
        if self.job_file.is_none() && (given("runtime") || jobs[0].time_based) && !given("number_ios") {
            jobs[0].number_ios = None;
        }
        Ok(jobs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(options: &[(&str, Option<&str>)]) -> WorkloadSpec {
        let options = options
            .iter()
            .map(|(k, v)| JobOption {
                key: k.to_string(),
                value: v.map(str::to_string),
                label: format!("--{k}"),
            })
            .collect();
        WorkloadSpec { job_file: None, options }
    }

    #[test]
    fn defaults_then_options() {
        let all = spec(&[]).jobs().unwrap();
        assert_eq!((all[0].numjobs, all[0].rwmixread, all[0].number_ios), (4, 70, Some(50_000)));
        let w = spec(&[("rw", Some("randwrite")), ("iodepth", Some("8"))]).jobs().unwrap();
        assert_eq!(
            (w[0].iodepth, w[0].numjobs, w[0].number_ios, w[0].size.is_none()),
            (8, 4, Some(50_000), true)
        );
        let timed = spec(&[("runtime", Some("2ms"))]).jobs().unwrap();
        assert_eq!(timed[0].number_ios, None);
        let e = spec(&[("rw", Some("sideways"))]).jobs().unwrap_err().to_string();
        assert!(e.starts_with("--rw: option 'rw': invalid value 'sideways'"), "{e}");
    }

    #[test]
    fn job_files_take_the_options_in_every_job() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.fio");
        std::fs::write(&path, "[global]\nrw=randread\n[a]\niodepth=4\n[b]\niodepth=16\n").unwrap();
        let mut w = WorkloadSpec { job_file: Some(path), ..spec(&[("bs", Some("16k"))]) };
        let jobs = w.jobs().unwrap();
        assert_eq!(
            jobs.iter().map(|j| (j.iodepth, j.bs.read.bytes())).collect::<Vec<_>>(),
            [(4, 16384), (16, 16384)]
        );
        w.job_file = Some(dir.path().join("missing.fio"));
        assert!(w.jobs().unwrap_err().to_string().starts_with("reading "));
    }
}
