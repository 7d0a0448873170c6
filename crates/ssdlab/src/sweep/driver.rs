//! Running a planned sweep: skip the runs whose results are on disk, hand the others to a
//! backend, save each result as it arrives, and keep the table on disk current.
//!
//! ```text
//!   Plan ──▶ lookup each hash in OUT/runs ──▶ done: into the table
//!                   └──▶ to run ──▶ backend (local workers | Ray) ──▶ report / error
//!                                        ──▶ OUT/runs/HASH.json ──▶ table (every 2 s and at the end)
//! ```

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::backend::{Backend, Local, SweepError, cores, default_memory};
use super::file::TableFormat;
use super::isolate::{Outcome, WorkerCommand};
use super::plan::{Budget, Plan};
use super::progress::{Bar, Status};
use super::ray::Ray;
use super::store::Store;
use super::table::{RunResult, Table};

/// Where the runs execute.
#[derive(Clone, Debug)]
pub enum BackendChoice {
    /// Worker processes on this machine.
    Local {
        /// At most this many at once (`None`: the sweep file's number, else one per core).
        workers: Option<usize>,
        /// How to start one.
        worker: WorkerCommand,
    },
    /// Tasks on a Ray cluster, through the Python bridge.
    Ray {
        /// The cluster (`host:port`, `ray://host:port`, `auto` or `local`).
        address: String,
        /// The Python that has the ssdlab package and Ray.
        python: PathBuf,
    },
}

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Where runs execute.
    pub backend: BackendChoice,
    /// The table's format (`None`: the sweep file's).
    pub table: Option<TableFormat>,
    /// Run again the runs recorded as failed.
    pub retry_failed: bool,
    /// Per-run limits over the sweep file's.
    pub budget: Budget,
    /// Draw a progress bar (on a terminal).
    pub progress: bool,
    /// Asked every few milliseconds; `true` stops the sweep (runs in flight are killed and run
    /// again next time). The Python API passes Python's pending Ctrl-C.
    pub interrupted: Option<fn() -> bool>,
}

/// What a sweep did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Runs in, skipped (results on disk), run now, and failed now.
    pub status: Status,
    /// The table file.
    pub table_path: PathBuf,
    /// The table.
    pub table: Table,
    /// Local workers used (0 for Ray).
    pub workers: usize,
}

/// The runs of `plan` to run, the others' results taken from the store.
fn resume(plan: &Plan, store: &Store, retry: bool) -> (Vec<Option<RunResult>>, Vec<usize>) {
    let mut results = vec![None; plan.runs.len()];
    let mut todo = Vec::new();
    for run in &plan.runs {
        match store.lookup(&run.hash) {
            Some(RunResult::Failed(_)) if retry => todo.push(run.index),
            Some(r) => results[run.index] = Some(r),
            None => todo.push(run.index),
        }
    }
    (results, todo)
}

/// Runs `plan`.
pub fn execute(plan: &Plan, opts: &SweepOptions) -> Result<Summary, SweepError> {
    let format = opts.table.unwrap_or(plan.table);
    let (mut results, todo) = resume(plan, &Store::existing(&plan.out), opts.retry_failed);
    let mut status =
        Status { total: plan.runs.len(), skipped: plan.runs.len() - todo.len(), ..Status::default() };
    let budget = Budget {
        time: opts.budget.time.or(plan.budget.time),
        memory: opts.budget.memory.or(plan.budget.memory),
    };

    // Runs with the same inputs run once.
    let mut same: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut queue = VecDeque::new();
    for &i in &todo {
        let runs = same.entry(plan.runs[i].hash.as_str()).or_default();
        if runs.is_empty() {
            queue.push_back(i);
        }
        runs.push(i);
    }
    let mut workers = 0;
    let mut store = None;
    if !queue.is_empty() {
        // Connect first: a cluster that cannot be reached is an error before anything is written.
        let mut backend: Box<dyn Backend> = match &opts.backend {
            BackendChoice::Local { workers: w, worker } => {
                workers = w.or(plan.workers).unwrap_or_else(cores).max(1);
                let budget = Budget { memory: budget.memory.or_else(|| default_memory(workers)), ..budget };
                Box::new(Local::new(worker.clone(), Store::existing(&plan.out).scratch(), budget, workers))
            }
            BackendChoice::Ray { address, python } => Box::new(Ray::connect(python, address, budget)?),
        };
        let store = store.insert(Store::open(&plan.out)?);
        let bar = Bar::new(&status, opts.progress);
        let mut in_flight = 0;
        let mut written = Instant::now();
        while !queue.is_empty() || in_flight > 0 {
            while in_flight < backend.slots()
                && let Some(i) = queue.pop_front()
            {
                backend.start(i, &plan.runs[i].spec.to_json(), &plan.runs[i].hash)?;
                in_flight += 1;
            }
            if opts.interrupted.is_some_and(|stop| stop()) {
                bar.finish();
                store.write_table(&Table::build(plan, &results), format)?;
                return Err(SweepError::Interrupted);
            }
            for (i, outcome) in backend.poll()? {
                in_flight -= 1;
                let hash = &plan.runs[i].hash;
                let result = record(store, hash, outcome)?;
                for &j in &same[hash.as_str()] {
                    status.ran += 1;
                    status.failed += usize::from(matches!(result, RunResult::Failed(_)));
                    results[j] = Some(result.clone());
                }
                bar.update(&status);
            }
            if written.elapsed() > Duration::from_secs(2) {
                store.write_table(&Table::build(plan, &results), format)?;
                written = Instant::now();
            }
        }
        bar.finish();
    }
    let store = match store {
        Some(s) => s,
        None => Store::open(&plan.out)?,
    };
    let table = Table::build(plan, &results);
    let table_path = store.write_table(&table, format)?;
    let _ = std::fs::remove_dir(store.scratch());
    Ok(Summary { status, table_path, table, workers })
}

/// Saves an outcome and returns the run's result.
fn record(store: &Store, hash: &str, outcome: Outcome) -> Result<RunResult, SweepError> {
    let text = match outcome {
        Outcome::Done(text) => text,
        Outcome::Failed(error) => {
            store.save_failure(hash, &error)?;
            return Ok(RunResult::Failed(error));
        }
    };
    match serde_json::from_str::<report::Report>(&text) {
        Ok(report) => {
            store.save_report(hash, &text)?;
            Ok(RunResult::of(&report))
        }
        Err(e) => {
            let error = format!("the worker's report does not read: {e}");
            store.save_failure(hash, &error)?;
            Ok(RunResult::Failed(error))
        }
    }
}
