//! `ssdlab sweep SWEEP.toml`: plan, then run (or list) every run of a sweep; and the hidden
//! `ssdlab sweep-worker` that runs one of them.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use ssdlab::sweep::{
    BackendChoice, Budget, Plan, Store, Summary, SweepFile, SweepOptions, TableFormat, WorkerCommand,
    describe, execute, parse_wall,
};

use crate::cli::{SweepAction, SweepArgs, SweepCmd, WorkerArgs};

pub fn run(a: SweepCmd) -> Result<()> {
    match a.action {
        Some(SweepAction::Plot(p)) => super::sweep_plot::run(p),
        None => sweep(a.run),
    }
}

/// The plan of the sweep file at `path`, its results in `out` if given.
fn plan(path: &Path, out: Option<&Path>) -> Result<Plan> {
    let (file, dir, default_out) = SweepFile::load(path)?;
    let mut plan = Plan::new(&file, &dir, &default_out)?;
    if let Some(out) = out {
        plan.out = out.to_path_buf();
    }
    Ok(plan)
}

fn sweep(a: SweepArgs) -> Result<()> {
    let path = a.file.expect("clap requires the sweep file");
    if a.workers == Some(0) {
        bail!("-j/--workers must be at least 1 (got 0)");
    }
    let budget = Budget {
        time: a
            .time_budget
            .as_deref()
            .map(parse_wall)
            .transpose()
            .map_err(anyhow::Error::msg)
            .context("--time-budget")?,
        memory: a.memory_budget.map(|m| m.bytes()),
    };
    let plan = plan(&path, a.out.as_deref())?;
    if a.dry_run {
        print!("{}", listing(&path, &plan, a.commands));
        return Ok(());
    }
    let backend = match a.ray {
        Some(address) => BackendChoice::Ray {
            address,
            python: std::env::var_os("SSDLAB_PYTHON").map_or_else(|| PathBuf::from("python3"), PathBuf::from),
        },
        None => BackendChoice::Local {
            workers: a.workers,
            worker: WorkerCommand {
                program: std::env::current_exe().context("finding the ssdlab executable")?,
                args: vec!["sweep-worker".into()],
            },
        },
    };
    let opts = SweepOptions {
        backend,
        table: a.csv.then_some(TableFormat::Csv),
        retry_failed: a.retry_failed,
        budget,
        progress: true,
        interrupted: None,
    };
    let started = Instant::now();
    let summary = execute(&plan, &opts)?;
    println!("{}", report(&path, &plan, &summary, started.elapsed().as_secs_f64()));
    Ok(())
}

/// What a sweep did, and its failures.
fn report(path: &Path, plan: &Plan, s: &Summary, secs: f64) -> String {
    let st = &s.status;
    let failed = if st.failed > 0 { format!(" ({} failed)", st.failed) } else { String::new() };
    let on = match (&opts_backend(s), st.ran) {
        (_, 0) => "nothing to run".to_string(),
        (Some(1), _) => "1 worker".into(),
        (Some(w), _) => format!("{w} workers"),
        (None, _) => "on ray".into(),
    };
    let mut out = format!(
        "sweep {}: {} runs: {} ran{failed}, {} had results on disk; {on}, {secs:.1}s\ntable: {}",
        path.display(),
        st.total,
        st.ran,
        st.skipped,
        s.table_path.display()
    );
    let errors = s.table.column("error").map(|c| &c.data);
    let runs = s.table.column("run").map(|c| &c.data);
    if let (Some(errors), Some(runs)) = (errors, runs) {
        let failures: Vec<String> = (0..s.table.rows())
            .filter_map(|row| {
                let e = errors.text(row)?;
                let run = &plan.runs[runs.number(row)? as usize];
                Some(format!("  run {} ({}): {e}", run.index, describe(&plan.axes, &run.values, run.seed)))
            })
            .collect();
        if !failures.is_empty() {
            out.push_str(&format!("\nfailed runs ({}):\n{}", failures.len(), failures.join("\n")));
        }
    }
    out
}

/// Local workers used, `None` on Ray.
fn opts_backend(s: &Summary) -> Option<usize> {
    (s.workers > 0).then_some(s.workers)
}

/// `--dry-run`: the runs, their values and whether their results exist; or their commands.
fn listing(path: &Path, plan: &Plan, commands: bool) -> String {
    if commands {
        return plan.runs.iter().map(|r| format!("{}\n", r.command)).collect();
    }
    let store = Store::existing(&plan.out);
    let mut rows = vec![{
        let mut h = vec!["run".to_string()];
        h.extend(plan.axes.iter().map(|a| a.key.clone()));
        h.extend(["seed".into(), "state".into(), "hash".into()]);
        h
    }];
    for r in &plan.runs {
        let mut row = vec![r.index.to_string()];
        row.extend(r.values.iter().map(ssdlab::setup::value_text));
        let state = match store.lookup(&r.hash) {
            Some(ssdlab::sweep::RunResult::Done(_)) => "done",
            Some(ssdlab::sweep::RunResult::Failed(_)) => "failed",
            None => "to run",
        };
        row.extend([r.seed.to_string(), state.into(), r.hash[..12].to_string()]);
        rows.push(row);
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let axes: Vec<String> = plan.axes.iter().map(|a| format!("{} ({})", a.key, a.values.len())).collect();
    let mut out = format!(
        "sweep {}: {} runs over {}; results in {}\n",
        path.display(),
        plan.runs.len(),
        if axes.is_empty() { "no axis".into() } else { axes.join(" x ") },
        plan.out.display()
    );
    for row in rows {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// `ssdlab sweep-worker SPEC REPORT`: runs one spec and writes its report.
pub fn worker(a: WorkerArgs) -> Result<()> {
    Ok(ssdlab::sweep::run_worker(&a.spec, &a.report)?)
}
