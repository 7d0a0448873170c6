//! One run in a process of its own, so that a run that panics, runs out of memory or takes
//! too long is recorded as failed while the sweep goes on.
//!
//! The worker (`ssdlab sweep-worker SPEC REPORT`, or `python -m ssdlab._worker SPEC REPORT` in
//! the Python package) reads the spec, runs it and writes the report; on failure it writes
//! one line to standard error and exits non-zero. The parent polls it: on exit it takes the
//! report or the error; over the time budget, or over the memory budget (resident memory, read
//! from `/proc`), it kills it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::plan::Budget;

/// How to start a worker: a program and its first arguments (the spec and report paths
/// follow).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerCommand {
    /// The program.
    pub program: PathBuf,
    /// Arguments before the two paths.
    pub args: Vec<String>,
}

/// What a run gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The report, as JSON text.
    Done(String),
    /// Why it failed, on one line.
    Failed(String),
}

/// A worker process running one spec.
pub struct Running {
    child: Child,
    started: Instant,
    budget: Budget,
    spec: PathBuf,
    report: PathBuf,
    stderr: PathBuf,
    done: bool,
}

impl Running {
    /// Starts a worker on `spec_json`, its files in `scratch` named after `tag`.
    pub fn start(
        cmd: &WorkerCommand,
        spec_json: &str,
        scratch: &Path,
        tag: &str,
        budget: Budget,
    ) -> std::io::Result<Running> {
        let spec = scratch.join(format!("{tag}.spec.json"));
        let report = scratch.join(format!("{tag}.report.json"));
        let stderr = scratch.join(format!("{tag}.stderr"));
        std::fs::write(&spec, spec_json)?;
        let _ = std::fs::remove_file(&report);
        let child = Command::new(&cmd.program)
            .args(&cmd.args)
            .arg(&spec)
            .arg(&report)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&stderr)?)
            .spawn()?;
        Ok(Running { child, started: Instant::now(), budget, spec, report, stderr, done: false })
    }

    /// The outcome, if the worker has finished or was killed for its budget.
    pub fn poll(&mut self) -> Option<Outcome> {
        match self.child.try_wait() {
            Ok(Some(status)) => return Some(self.finish(status)),
            Ok(None) => {}
            Err(e) => return Some(self.kill(format!("cannot wait for the worker: {e}"))),
        }
        if let Some(limit) = self.budget.time
            && self.started.elapsed() > limit
        {
            return Some(self.kill(format!("exceeded the time budget of {} (killed)", wall(limit))));
        }
        if let (Some(limit), Some(rss)) = (self.budget.memory, resident(self.child.id()))
            && rss > limit
        {
            let (l, r) = (sim::ByteSize(limit), sim::ByteSize(rss));
            return Some(self.kill(format!("exceeded the memory budget of {l:#} (resident {r:#}, killed)")));
        }
        None
    }

    /// Waits for the outcome, polling every few milliseconds.
    pub fn wait(mut self) -> Outcome {
        loop {
            if let Some(o) = self.poll() {
                return o;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn kill(&mut self, why: String) -> Outcome {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.cleanup();
        Outcome::Failed(why)
    }

    fn finish(&mut self, status: ExitStatus) -> Outcome {
        let stderr = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let outcome = if status.success() {
            match std::fs::read_to_string(&self.report) {
                Ok(text) => Outcome::Done(text),
                Err(e) => Outcome::Failed(format!("the worker wrote no report ({e})")),
            }
        } else {
            Outcome::Failed(failure(status, &stderr))
        };
        self.cleanup();
        outcome
    }

    fn cleanup(&mut self) {
        self.done = true;
        for f in [&self.spec, &self.report, &self.stderr] {
            let _ = std::fs::remove_file(f);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.done {
            self.kill(String::new());
        }
    }
}

/// A wall-clock duration as `90s`, `10m` or `1.5h`.
fn wall(d: Duration) -> String {
    let s = d.as_secs_f64();
    let g = |v: f64| format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').to_string();
    if s >= 3600.0 {
        format!("{}h", g(s / 3600.0))
    } else if s >= 60.0 {
        format!("{}m", g(s / 60.0))
    } else {
        format!("{}s", g(s))
    }
}

/// Resident memory of process `pid`, bytes (`None` where `/proc` does not say).
fn resident(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// One line saying why a worker failed: its panic, its error line, or its signal.
pub fn failure(status: ExitStatus, stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    if let Some(i) = lines.iter().position(|l| l.contains(" panicked at ")) {
        let at = lines[i].split(" panicked at ").nth(1).unwrap_or("").trim_end_matches(':');
        let message: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("note:") && !l.starts_with("stack backtrace:"))
            .copied()
            .collect();
        return format!("panicked: {} (at {at})", message.join(" "));
    }
    let last = lines.last().map(|l| l.trim_start_matches("ssdlab: ").to_string());
    use std::os::unix::process::ExitStatusExt;
    match (status.signal(), last) {
        (Some(sig), Some(l)) => format!("killed by signal {sig}: {l}"),
        (Some(sig), None) => format!("killed by signal {sig}"),
        (None, Some(l)) => l,
        (None, None) => format!("the worker exited with {status} and said nothing"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn failures_read_as_one_line() {
        let panic =
            "thread 'main' (77) panicked at crates/x.rs:3:5:\nboom\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(failure(ExitStatus::from_raw(101 << 8), panic), "panicked: boom (at crates/x.rs:3:5)");
        assert_eq!(
            failure(ExitStatus::from_raw(1 << 8), "ssdlab: job 'j': size: too big\n"),
            "job 'j': size: too big"
        );
        assert_eq!(failure(ExitStatus::from_raw(9), ""), "killed by signal 9");
        assert_eq!(wall(Duration::from_secs(90)), "1.5m");
        assert_eq!(wall(Duration::from_millis(2500)), "2.5s");
    }

    #[test]
    fn a_worker_over_its_time_budget_is_killed_and_one_that_fails_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let sh = |script: &str| WorkerCommand {
            program: "sh".into(),
            args: vec!["-c".into(), script.into(), "sh".into()],
        };
        let budget = Budget { time: Some(Duration::from_millis(200)), memory: None };
        let slow = Running::start(&sh("sleep 30"), "{}", dir.path(), "slow", budget).unwrap();
        assert_eq!(slow.wait(), Outcome::Failed("exceeded the time budget of 0.2s (killed)".into()));
        let ok = Running::start(&sh("cat \"$1\" > \"$2\""), "{\"x\":1}", dir.path(), "ok", Budget::default())
            .unwrap();
        assert_eq!(ok.wait(), Outcome::Done("{\"x\":1}".into()));
        let bad = Running::start(
            &sh("echo 'ssdlab: no good' >&2; exit 1"),
            "{}",
            dir.path(),
            "bad",
            Budget::default(),
        );
        assert_eq!(bad.unwrap().wait(), Outcome::Failed("no good".into()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "scratch files are removed");
    }
}
