//! The Ray backend: each run a Ray task on a cluster, through a bridge process in Python (Ray
//! has no Rust client): `python -m ssdlab._ray_bridge ADDRESS`, from the ssdlab Python package
//! installed with Ray (`pip install 'ssdlab[ray]'`).
//!
//! The bridge speaks JSON lines. It first answers `{"ready": {"cpus": N, ...}}` once it is
//! connected, or `{"fatal": "why"}` (an unreachable address fails within seconds); then, for
//! each `{"id": I, "spec": "...", "time_s": T, "memory": M}` it reads, it submits a task that
//! runs the spec in a worker process of its own under the same budget as a local run, and
//! writes `{"id": I, "ok": true, "report": "..."}` or `{"id": I, "ok": false, "error": "..."}`
//! when it finishes.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::backend::{Backend, SweepError};
use super::isolate::Outcome;
use super::plan::Budget;

/// How long the bridge may take to say it is connected (starting Ray on this machine takes
/// a few seconds; an address that does not answer is refused by the bridge sooner).
const READY: Duration = Duration::from_secs(90);

/// The bridge process and its cluster.
pub struct Ray {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    budget: Budget,
    slots: usize,
}

impl Ray {
    /// Starts the bridge with `python` and waits until it is connected to `address`
    /// (`host:port` of a cluster's head, `ray://host:port`, `auto`, or `local` to start Ray
    /// on this machine for the sweep).
    pub fn connect(python: &Path, address: &str, budget: Budget) -> Result<Ray, SweepError> {
        let mut child = Command::new(python)
            .args(["-m", "ssdlab._ray_bridge", address])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SweepError::Ray(format!("cannot start {}: {e}", python.display())))?;
        let (tx, lines) = channel();
        let out = child.stdout.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr.clone();
        let err = child.stderr.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let mut t = tail.lock().expect("not poisoned");
                t.push_back(line);
                if t.len() > 20 {
                    t.pop_front();
                }
            }
        });
        let stdin = child.stdin.take();
        let mut ray = Ray { child, stdin, lines, stderr, budget, slots: 1 };
        let first = match ray.lines.recv_timeout(READY) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                return Err(SweepError::Ray(format!("no answer from {address} within {}s", READY.as_secs())));
            }
            Err(RecvTimeoutError::Disconnected) => return Err(ray.died()),
        };
        let v: Value = serde_json::from_str(&first).map_err(|_| ray.died())?;
        if let Some(why) = v.get("fatal").and_then(Value::as_str) {
            return Err(SweepError::Ray(why.to_string()));
        }
        let cpus = v.pointer("/ready/cpus").and_then(Value::as_f64).ok_or_else(|| ray.died())?;
        ray.slots = (cpus.max(1.0) as usize) * 2;
        Ok(ray)
    }

    /// The error for a bridge that went away, with the last thing it said.
    fn died(&mut self) -> SweepError {
        std::thread::sleep(Duration::from_millis(200));
        let tail = self.stderr.lock().expect("not poisoned");
        let said = tail.iter().rev().find(|l| !l.trim().is_empty()).cloned().unwrap_or_default();
        let status = self.child.try_wait().ok().flatten().map_or("still running".into(), |s| s.to_string());
        SweepError::Ray(format!("the bridge stopped ({status}): {said}"))
    }
}

impl Backend for Ray {
    fn slots(&self) -> usize {
        self.slots
    }

    fn start(&mut self, id: usize, spec_json: &str, _tag: &str) -> Result<(), SweepError> {
        let msg = json!({
            "id": id,
            "spec": spec_json,
            "time_s": self.budget.time.map(|t| t.as_secs_f64()),
            "memory": self.budget.memory,
        });
        let sent = match &mut self.stdin {
            Some(stdin) => writeln!(stdin, "{msg}").and_then(|()| stdin.flush()).is_ok(),
            None => false,
        };
        if sent { Ok(()) } else { Err(self.died()) }
    }

    fn poll(&mut self) -> Result<Vec<(usize, Outcome)>, SweepError> {
        let mut out = Vec::new();
        let mut next = self.lines.recv_timeout(Duration::from_millis(50));
        loop {
            match next {
                Ok(line) => {
                    out.push(parse(&line).ok_or_else(|| SweepError::Ray(format!("bad answer: {line}")))?)
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return Err(self.died()),
            }
            next = self.lines.try_recv().map_err(|e| match e {
                std::sync::mpsc::TryRecvError::Empty => RecvTimeoutError::Timeout,
                std::sync::mpsc::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            });
        }
        Ok(out)
    }
}

/// One result line.
fn parse(line: &str) -> Option<(usize, Outcome)> {
    let v: Value = serde_json::from_str(line).ok()?;
    let id = v.get("id")?.as_u64()? as usize;
    let outcome = if v.get("ok")?.as_bool()? {
        Outcome::Done(v.get("report")?.as_str()?.to_string())
    } else {
        Outcome::Failed(v.get("error")?.as_str()?.to_string())
    };
    Some((id, outcome))
}

impl Drop for Ray {
    fn drop(&mut self) {
        // Closing its input tells the bridge to stop; then give it a moment to disconnect.
        self.stdin.take();
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines() {
        assert_eq!(parse(r#"{"id": 3, "ok": true, "report": "{}"}"#), Some((3, Outcome::Done("{}".into()))));
        assert_eq!(
            parse(r#"{"id": 4, "ok": false, "error": "boom"}"#),
            Some((4, Outcome::Failed("boom".into())))
        );
        assert_eq!(parse(r#"{"id": 4}"#), None);
    }
}
