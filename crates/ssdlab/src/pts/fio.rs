//! The live executor: each step is one run of fio against a block device, a file (O_DIRECT) or
//! an NBD export (fio's `nbd` engine), its JSON output parsed for IOPS.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::executor::{Executor, Measured, PtsError};
use super::plan::{Job, Limit};

/// What fio drives.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// A block device or a regular file, opened with O_DIRECT through libaio.
    Path(PathBuf),
    /// An NBD URI (`nbd://host:port/export`, `nbd+unix:///?socket=...`).
    Nbd(String),
}

impl Target {
    /// A target from the command line: an NBD URI, or a path.
    pub fn parse(s: &str) -> Target {
        if s.starts_with("nbd://") || s.starts_with("nbds://") || s.starts_with("nbd+unix://") {
            Target::Nbd(s.to_string())
        } else {
            Target::Path(PathBuf::from(s))
        }
    }

    /// How messages name it.
    pub fn show(&self) -> String {
        match self {
            Target::Path(p) => p.display().to_string(),
            Target::Nbd(u) => u.clone(),
        }
    }

    /// fio's engine and target options for it: libaio on the path, or the nbd engine.
    pub fn fio_args(&self) -> [String; 2] {
        match self {
            Target::Path(p) => ["--ioengine=libaio".into(), format!("--filename={}", p.display())],
            Target::Nbd(uri) => ["--ioengine=nbd".into(), format!("--uri={uri}")],
        }
    }
}

/// Why `nbdinfo --size` gave no size.
pub enum NbdSizeError {
    /// nbdinfo could not be run.
    Run(std::io::Error),
    /// It failed: the first line it wrote to standard error.
    Failed(String),
    /// It printed something that is not a number.
    Unreadable(String),
}

/// An NBD export's size in bytes, from `nbdinfo --size` (libnbd's tool).
pub fn nbd_size(uri: &str) -> Result<u64, NbdSizeError> {
    let out = Command::new("nbdinfo").args(["--size", uri]).output().map_err(NbdSizeError::Run)?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        let line = msg.lines().find(|l| !l.trim().is_empty()).unwrap_or("failed");
        return Err(NbdSizeError::Failed(line.trim().to_string()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().parse().map_err(|_| NbdSizeError::Unreadable(text.trim().to_string()))
}

/// fio against a live target.
pub struct Fio {
    fio: PathBuf,
    target: Target,
    capacity: u64,
    /// Where fio writes its JSON (one file, rewritten by every step).
    scratch: PathBuf,
    steps: u64,
}

impl Fio {
    /// fio (the `fio` on PATH, or `fio`) against `target`, writing its JSON output into
    /// `scratch_dir`. Sizes the target; fails with one line if it cannot.
    pub fn new(fio: PathBuf, target: Target, scratch_dir: &Path) -> Result<Self, PtsError> {
        let version = Command::new(&fio)
            .arg("--version")
            .output()
            .map_err(|e| PtsError::Target(format!("running {}: {e}", fio.display())))?;
        if !version.status.success() {
            return Err(PtsError::Target(format!("{} --version failed: is it fio?", fio.display())));
        }
        let capacity = size(&target)?;
        if capacity == 0 {
            return Err(PtsError::Target(format!("{}: the target is empty", target.show())));
        }
        Ok(Fio { fio, target, capacity, scratch: scratch_dir.join("fio-step.json"), steps: 0 })
    }

    fn command(&self, job: &Job) -> Command {
        let mut c = Command::new(&self.fio);
        c.arg("--output-format=json").arg(format!("--output={}", self.scratch.display()));
        c.args(["--name=pts", "--group_reporting", "--direct=1", "--randrepeat=0", "--norandommap"]);
        c.args(self.target.fio_args());
        for (k, v) in job.options() {
            match (k, &job.limit) {
                // fio wants plain flags; its runtime takes a unit suffix.
                ("time_based", _) => {
                    c.arg("--time_based");
                }
                ("size", _) => {
                    c.arg(format!("--size={}", self.capacity));
                }
                _ => {
                    c.arg(format!("--{k}={v}"));
                }
            }
        }
        if let Limit::Seconds(_) = job.limit {
            c.arg("--ramp_time=0");
        }
        c
    }
}

/// The target's size in bytes: a file's length, a block device's end, an NBD export's size
/// (from `nbdinfo --size`).
fn size(target: &Target) -> Result<u64, PtsError> {
    match target {
        Target::Path(p) => {
            use std::io::{Seek, SeekFrom};
            let mut f = std::fs::File::open(p)
                .map_err(|e| PtsError::Target(format!("opening {}: {e}", p.display())))?;
            f.seek(SeekFrom::End(0)).map_err(|e| PtsError::Target(format!("sizing {}: {e}", p.display())))
        }
        Target::Nbd(uri) => nbd_size(uri).map_err(|e| {
            PtsError::Target(match e {
                NbdSizeError::Run(e) => format!("sizing {uri}: running nbdinfo (libnbd's tool): {e}"),
                NbdSizeError::Failed(line) => format!("sizing {uri}: nbdinfo: {line}"),
                NbdSizeError::Unreadable(text) => format!("sizing {uri}: nbdinfo printed {text:?}"),
            })
        }),
    }
}

impl Executor for Fio {
    fn describe(&self) -> String {
        format!("{} (live, fio)", self.target.show())
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn purge(&mut self) -> Result<String, PtsError> {
        let job = Job {
            label: "purge".into(),
            rw: "trim",
            read_pct: 0,
            bs: 1 << 20,
            threads: 1,
            iodepth: 16,
            limit: Limit::Loops(1),
        };
        Ok(match self.run(&job) {
            Ok(_) => format!(
                "live: TRIM (discard) of the whole {} bytes through fio (rw=trim); what the target \
                 does with it is its own (a true PTS purge is a secure erase or format)",
                self.capacity
            ),
            Err(e) => format!("live: not purged: the target did not take a whole-range TRIM ({e})"),
        })
    }

    fn run(&mut self, job: &Job) -> Result<Measured, PtsError> {
        self.steps += 1;
        let _ = std::fs::remove_file(&self.scratch);
        let out = self.command(job).output().map_err(|e| PtsError::Step {
            job: job.label.clone(),
            reason: format!("running {}: {e}", self.fio.display()),
        })?;
        if !out.status.success() {
            let msg = String::from_utf8_lossy(&out.stderr);
            let line = msg.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
            return Err(PtsError::Step {
                job: job.label.clone(),
                reason: format!("fio exited with {}: {}", out.status, line.trim()),
            });
        }
        let text = std::fs::read_to_string(&self.scratch).map_err(|e| {
            PtsError::FioOutput(format!("reading fio's output {}: {e}", self.scratch.display()))
        })?;
        parse_fio_json(&text).map_err(|e| PtsError::FioOutput(format!("{}: {e}", self.scratch.display())))
    }
}

/// IOPS and bytes written from fio's `--output-format=json` text, summed over its jobs (one
/// with `group_reporting`). Text before the JSON object (fio's own notes) is skipped. Fails
/// with one line on anything else: not JSON, no jobs, a job that reports an error.
pub fn parse_fio_json(text: &str) -> Result<Measured, String> {
    let start = text.find('{').ok_or("no JSON object in fio's output")?;
    let v: Value = serde_json::from_str(&text[start..]).map_err(|e| format!("fio's JSON: {e}"))?;
    let jobs = v.get("jobs").and_then(Value::as_array).ok_or("fio's JSON has no \"jobs\" array")?;
    if jobs.is_empty() {
        return Err("fio's JSON has no jobs".into());
    }
    let mut m = Measured::default();
    for (i, job) in jobs.iter().enumerate() {
        let err = job.get("error").and_then(Value::as_i64).unwrap_or(0);
        if err != 0 {
            return Err(format!("fio job {i} failed with error {err}"));
        }
        let dir = |d: &str| job.get(d).ok_or_else(|| format!("fio job {i} has no \"{d}\" section"));
        let num = |sec: &Value, d: &str, k: &str| {
            sec.get(k).and_then(Value::as_f64).ok_or_else(|| format!("fio job {i}: no number {d}.{k}"))
        };
        let (read, write) = (dir("read")?, dir("write")?);
        m.read_iops += num(read, "read", "iops")?;
        m.write_iops += num(write, "write", "iops")?;
        m.bytes_written += num(write, "write", "io_bytes")? as u64;
        // Each direction's runtime (ms); job_runtime sums the jobs of a group.
        for sec in [read, write] {
            let ms = sec.get("runtime").and_then(Value::as_f64).unwrap_or(0.0);
            m.seconds = m.seconds.max(ms / 1000.0);
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from fio 3.33 (`--output-format=json --group_reporting`, randrw 70/30 4 KiB,
    /// two jobs at QD8 for 1 s over nbdkit's memory plugin through the nbd engine), cut down to
    /// the fields around the ones read; the note line before it is fio's own kind of preamble.
    const SAMPLE: &str = r#"note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1
{
  "fio version" : "fio-3.33",
  "timestamp" : 1795813426,
  "jobs" : [
    {
      "jobname" : "pts",
      "groupid" : 0,
      "error" : 0,
      "elapsed" : 2,
      "read" : {
        "io_bytes" : 96899072,
        "io_kbytes" : 94628,
        "bw_bytes" : 95373102,
        "bw" : 93137,
        "iops" : 23284.448819,
        "runtime" : 1016,
        "total_ios" : 23657
      },
      "write" : {
        "io_bytes" : 41558016,
        "io_kbytes" : 40584,
        "bw_bytes" : 40903559,
        "bw" : 39944,
        "iops" : 9986.220472,
        "runtime" : 1016,
        "total_ios" : 10146
      },
      "trim" : { "io_bytes" : 0, "iops" : 0.000000, "runtime" : 0 },
      "job_runtime" : 2015,
      "usr_cpu" : 2.332506
    }
  ]
}
"#;

    #[test]
    fn a_captured_report_parses() {
        let m = parse_fio_json(SAMPLE).unwrap();
        assert!((m.read_iops - 23284.448819).abs() < 1e-6);
        assert!((m.write_iops - 9986.220472).abs() < 1e-6);
        assert_eq!(m.bytes_written, 41558016);
        // The directions' runtime, not job_runtime (summed over the group's jobs).
        assert!((m.seconds - 1.016).abs() < 1e-9);
    }

    #[test]
    fn bad_output_is_one_line() {
        for (text, want) in [
            ("", "no JSON object"),
            ("{ \"jobs\": [ ", "fio's JSON"),
            ("{}", "no \"jobs\""),
            ("{\"jobs\": []}", "no jobs"),
            ("{\"jobs\": [{\"error\": 5, \"read\": {}, \"write\": {}}]}", "error 5"),
            ("{\"jobs\": [{\"read\": {\"iops\": 1}, \"write\": {}}]}", "write.iops"),
        ] {
            let e = parse_fio_json(text).unwrap_err();
            assert!(e.contains(want) && !e.contains('\n'), "{text}: {e}");
        }
    }

    #[test]
    fn targets_are_told_apart() {
        assert_eq!(Target::parse("nbd://127.0.0.1:10809"), Target::Nbd("nbd://127.0.0.1:10809".into()));
        assert_eq!(Target::parse("/dev/nvme0n1"), Target::Path("/dev/nvme0n1".into()));
    }
}
