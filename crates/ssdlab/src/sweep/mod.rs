//! `ssdlab sweep`: many runs of one experiment, over axes of configuration and workload
//! values and seeds, in parallel worker processes or on a Ray cluster, into one table.
//!
//! ```text
//!   SWEEP.toml ──▶ SweepFile ──▶ Plan (every run resolved and checked: errors before any run)
//!                                  │
//!                                  ▼
//!            driver: skip runs on disk ──▶ Backend: Local workers | Ray tasks
//!                                  │              (each run in a process of its own, budgeted)
//!                                  ▼
//!            OUT/runs/HASH.json (reports) ──▶ Table ──▶ results.parquet | results.csv, sweep.json
//! ```
//!
//! A run's identity is the content hash of its resolved inputs (device, jobs, start, seed)
//! and the ssdlab version: a second invocation of the same sweep runs nothing, and a sweep
//! whose axes grew runs only the new points.

mod backend;
mod chart;
mod csv;
mod driver;
mod expand;
mod file;
mod isolate;
mod parquet;
mod plan;
mod progress;
mod ray;
mod recipe;
mod store;
mod table;
mod worker;

pub use backend::{SweepError, cores};
pub use chart::{ChartError, ChartSpec, chart, default_chart_path, draw_chart};
pub use driver::{BackendChoice, Summary, SweepOptions, execute};
pub use expand::MAX_RUNS;
pub use file::{AxisSpec, Base, BudgetSpec, Combine, FileError, RangeSpec, SweepFile, TableFormat, Values};
pub use isolate::{Outcome, Running, WorkerCommand};
pub use plan::{Axis, Budget, Plan, PlanError, PlannedRun, SetupError, Target, describe, parse_wall};
pub use progress::Status;
pub use recipe::Recipe;
pub use store::{Store, StoreError, read_table};
pub use table::{Column, ColumnData, RunResult, SWEEP_SCHEMA, Table};
pub use worker::{PANIC_SEED_VAR, WorkerError, run_worker};
