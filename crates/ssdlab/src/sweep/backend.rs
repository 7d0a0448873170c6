//! Where runs execute: [`Local`] worker processes on this machine, or a Ray cluster
//! ([`super::ray::Ray`]). The driver hands a backend specs as JSON and collects outcomes.

use std::path::PathBuf;
use std::time::Duration;

use super::isolate::{Outcome, Running, WorkerCommand};
use super::plan::Budget;

/// Why a sweep stopped.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The results directory could not be written.
    #[error(transparent)]
    Store(#[from] super::store::StoreError),
    /// A worker process could not be started.
    #[error("cannot start the worker {}: {source}", program.display())]
    Spawn {
        /// The worker program.
        program: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The Ray backend could not connect, or lost its cluster.
    #[error("ray: {0}")]
    Ray(String),
    /// The caller asked to stop ([`super::SweepOptions::interrupted`]); finished runs are saved.
    #[error("interrupted: the runs that finished are saved, the others run next time")]
    Interrupted,
}

/// Something that runs specs.
pub trait Backend {
    /// How many runs may be in flight at once.
    fn slots(&self) -> usize;
    /// Starts run `id` on `spec_json`; `tag` is unique among the runs in flight.
    fn start(&mut self, id: usize, spec_json: &str, tag: &str) -> Result<(), SweepError>;
    /// The runs that finished since the last call; waits a little if none has.
    fn poll(&mut self) -> Result<Vec<(usize, Outcome)>, SweepError>;
}

/// Worker processes on this machine, at most `workers` at a time.
pub struct Local {
    worker: WorkerCommand,
    scratch: PathBuf,
    budget: Budget,
    workers: usize,
    running: Vec<(usize, Running)>,
}

impl Local {
    /// A backend starting `worker` processes with scratch files in `scratch`.
    pub fn new(worker: WorkerCommand, scratch: PathBuf, budget: Budget, workers: usize) -> Local {
        Local { worker, scratch, budget, workers: workers.max(1), running: Vec::new() }
    }
}

impl Backend for Local {
    fn slots(&self) -> usize {
        self.workers
    }

    fn start(&mut self, id: usize, spec_json: &str, tag: &str) -> Result<(), SweepError> {
        let run = Running::start(&self.worker, spec_json, &self.scratch, tag, self.budget)
            .map_err(|source| SweepError::Spawn { program: self.worker.program.clone(), source })?;
        self.running.push((id, run));
        Ok(())
    }

    fn poll(&mut self) -> Result<Vec<(usize, Outcome)>, SweepError> {
        let mut done = Vec::new();
        self.running.retain_mut(|(id, run)| match run.poll() {
            Some(outcome) => {
                done.push((*id, outcome));
                false
            }
            None => true,
        });
        if done.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(done)
    }
}

/// Processes this machine can run at once.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The default memory budget of a run: the machine's memory shared by `workers` (`None`
/// where `/proc/meminfo` does not say).
pub fn default_memory(workers: usize) -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024 / workers.max(1) as u64)
}
