//! What the figure commands share: devices from presets (shrunk with `--quick`), runs on
//! them, and the table of measured against published values.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use firmware::config::DeviceConfig;
use firmware::platform::StoreChoice;
use host::run::RunOptions;
use host::workload::JobSpec;
use report::Report;
use serde::Serialize;
use ssdlab::{Rig, Start};

use super::FigureOpts;
use crate::named_device;

/// One line of a figure's table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Which published figure or claim.
    pub figure: String,
    /// What was measured.
    pub metric: String,
    /// ssdlab's value.
    pub measured: String,
    /// The published value (PRESETS.md).
    pub published: String,
    /// How they compare, or why they differ.
    pub note: String,
    /// Whether the published result is reproduced (`None`: a row that shows a value without
    /// judging it, or a comparison the paper states in words the model cannot judge).
    pub verdict: Option<Verdict>,
}

/// How a measured value stands against a published one (docs/fidelity.md states the rules).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The published shape, its effect within a factor of two of the published size.
    Yes,
    /// The published direction, the size off by more than a factor of two.
    Direction,
    /// Not reproduced: the opposite direction, or no effect where the paper reports one.
    No,
    /// Not reproduced on the default configuration; reproduced (`Yes` or `Direction`, in
    /// the second field) under the condition named, which the paper does not state.
    Under(String, Box<Verdict>),
}

impl Verdict {
    /// A relative change (e.g. +0.31 for +31%) against the published one: `Yes` with the
    /// published sign and within a factor of two of its size, `Direction` with the sign and
    /// within a factor of ten, `No` otherwise (an effect a tenth of the published one or less
    /// is no effect: +0.3% against +31% is not the paper's result).
    pub fn change(measured: f64, published: f64) -> Verdict {
        let r = measured / published;
        if measured * published <= 0.0 || !(0.1..=10.0).contains(&r) {
            Verdict::No
        } else if (0.5..=2.0).contains(&r) {
            Verdict::Yes
        } else {
            Verdict::Direction
        }
    }

    /// A ratio (e.g. 2.2 for x2.2) against the published one: [`change`](Self::change) of
    /// the ratios less one.
    pub fn ratio(measured: f64, published: f64) -> Verdict {
        Verdict::change(measured - 1.0, published - 1.0)
    }

    /// `Yes` when `value` lies in `lo..=hi`, else `No` (a bound, with the tolerance the
    /// caller states).
    pub fn within(value: f64, lo: f64, hi: f64) -> Verdict {
        if (lo..=hi).contains(&value) { Verdict::Yes } else { Verdict::No }
    }

    /// A published measurement (a value or a range `lo..=hi`): `Yes` within a factor of two
    /// of the range (`lo / 2 ..= 2 hi`), else `No`.
    pub fn near(value: f64, lo: f64, hi: f64) -> Verdict {
        Verdict::within(value, lo / 2.0, hi * 2.0)
    }

    /// `Yes` or `No` from a shape test.
    pub fn shape(holds: bool) -> Verdict {
        if holds { Verdict::Yes } else { Verdict::No }
    }

    /// The verdict in a word or a phrase, as the tables print it.
    pub fn label(&self) -> String {
        match self {
            Verdict::Yes => "yes".into(),
            Verdict::Direction => "direction only".into(),
            Verdict::No => "no".into(),
            Verdict::Under(condition, v) => format!("{} with {condition}", v.label()),
        }
    }
}

impl Row {
    /// Sets the verdict.
    pub fn judge(&mut self, v: Verdict) {
        self.verdict = Some(v);
    }
}

/// A figure's runs and table.
pub struct Lab {
    pub opts: FigureOpts,
    name: &'static str,
    rows: Vec<Row>,
    started: Instant,
}

impl Lab {
    pub fn new(name: &'static str, opts: &FigureOpts) -> Result<Lab> {
        if let Some(dir) = &opts.out {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        Ok(Lab { opts: opts.clone(), name, rows: Vec::new(), started: Instant::now() })
    }

    /// `full` at full size, `quick` with `--quick`.
    pub fn pick<T>(&self, full: T, quick: T) -> T {
        if self.opts.quick { quick } else { full }
    }

    /// A preset, shrunk to `quick_blocks` blocks per plane with `--quick`, then `edit`ed.
    pub fn device(
        &self,
        preset: &str,
        quick_blocks: u32,
        edit: impl FnOnce(&mut DeviceConfig),
    ) -> Result<DeviceConfig> {
        let mut cfg = named_device::load(Some(preset))?;
        if self.opts.quick {
            named_device::set_blocks(&mut cfg, quick_blocks)?;
        }
        edit(&mut cfg);
        cfg.validate().map_err(|e| anyhow::anyhow!("{preset}: {e}"))?;
        Ok(cfg)
    }

    /// Builds `cfg` in its starting state.
    pub fn rig(&self, cfg: &DeviceConfig, start: Start) -> Result<Rig> {
        Ok(ssdlab::prepare_rig(cfg, &StoreChoice::Metadata, self.opts.seed, start, &mut |_, _| {})?)
    }

    /// A job from fio options.
    pub fn job(&self, name: &str, options: &[(&str, &str)]) -> JobSpec {
        let mut j = JobSpec::new(name);
        for (k, v) in options {
            j.set(k, Some(v)).unwrap_or_else(|e| panic!("figure job option {k}={v}: {e}"));
        }
        j
    }

    /// Runs `jobs` on `rig` (which may have run before) and returns the report; says so on
    /// standard error.
    pub fn run(&self, what: &str, rig: &Rig, jobs: &[JobSpec], opts: &RunOptions) -> Result<Report> {
        let t = Instant::now();
        let (r, _) = ssdlab::measure_system(
            rig.system(),
            &rig.initial_state,
            jobs,
            self.opts.seed,
            opts,
            &mut |_| {},
        )?;
        eprintln!("{}: {what} ({:.1}s)", self.name, t.elapsed().as_secs_f64());
        Ok(r)
    }

    /// Runs `jobs` like [`run`](Self::run), then flushes, and returns the report with the
    /// device's mean power from the first command until everything written is on flash (a
    /// host write buffer keeps the device busy after the host's last completion).
    pub fn run_drained(
        &self,
        what: &str,
        rig: &Rig,
        jobs: &[JobSpec],
        opts: &RunOptions,
    ) -> Result<(Report, f64)> {
        let sys = rig.system();
        let (e0, t0) = (sys.sample().energy, sys.sim().now());
        let r = self.run(what, rig, jobs, opts)?;
        self.settle(rig)?;
        let (e1, t1) = (sys.sample().energy, sys.sim().now());
        let watts = (e1 - e0).per_second(t1.saturating_since(t0).as_secs_f64()).device();
        Ok((r, watts))
    }

    /// Flushes `rig`'s system (everything written reaches flash) before counters are read.
    pub fn settle(&self, rig: &Rig) -> Result<()> {
        let front = rig.system().front();
        let done = rig.system().sim().block_on(async move {
            if !front.has_queue(1) {
                front.create_queue(1).await.map_err(|e| anyhow::anyhow!("creating a queue: {e}"))?;
            }
            Ok::<_, anyhow::Error>(front.submit(1, firmware::hil::NvmeCommand::flush()).await.status)
        })??;
        anyhow::ensure!(done == firmware::hil::Status::Success, "flush failed: {done:?}");
        Ok(())
    }

    /// Saves `report` as `NAME.json`, with its plots in `NAME/`, under `--out`.
    pub fn save(&self, name: &str, report: &Report, plots: bool) -> Result<()> {
        let Some(dir) = &self.opts.out else { return Ok(()) };
        super::super::write_json(&dir.join(format!("{name}.json")), report)?;
        if plots {
            crate::commands::plot::write(report, &dir.join(name))?;
        }
        Ok(())
    }

    /// Adds a line to the table; [`Row::judge`] on the result says whether it reproduces the
    /// published value.
    pub fn row(
        &mut self,
        figure: &str,
        metric: &str,
        measured: String,
        published: &str,
        note: String,
    ) -> &mut Row {
        self.rows.push(Row {
            figure: figure.into(),
            metric: metric.into(),
            measured,
            published: published.into(),
            note,
            verdict: None,
        });
        self.rows.last_mut().expect("just pushed")
    }

    /// Writes `chart` as NAME.png under `--out` (nothing without it).
    pub fn chart(&self, name: &str, chart: &plot::Chart) -> Result<()> {
        if let Some(dir) = &self.opts.out {
            plot::write_chart(chart, &dir.join(format!("{name}.png")))?;
        }
        Ok(())
    }

    /// The rows, ending the lab without printing.
    pub fn into_rows(self) -> Vec<Row> {
        self.rows
    }

    /// Prints the table and writes it under `--out`.
    pub fn finish(self) -> Result<()> {
        let mut t = text_table(&self.rows);
        let _ = write!(
            t,
            "{} runs in {:.0}s{}",
            self.name,
            self.started.elapsed().as_secs_f64(),
            if self.opts.quick { " (--quick: shrunk devices, not the figures)" } else { "" }
        );
        println!("{t}");
        if let Some(dir) = &self.opts.out {
            super::super::write_json(&dir.join("table.json"), &self.rows)?;
            let mut csv = String::from("figure,metric,ssdlab,published,reproduced,note\n");
            for r in &self.rows {
                let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
                let _ = writeln!(
                    csv,
                    "{},{},{},{},{},{}",
                    q(&r.figure),
                    q(&r.metric),
                    q(&r.measured),
                    q(&r.published),
                    q(&r.verdict.as_ref().map_or(String::new(), Verdict::label)),
                    q(&r.note)
                );
            }
            let path: PathBuf = dir.join("table.csv");
            std::fs::write(&path, csv).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("table, reports and plots in {}", dir.display());
        }
        Ok(())
    }
}

/// The rows as aligned text: figure, metric, ssdlab's value, the published one, the verdict
/// (`-` where a row is not judged) and the note.
pub fn text_table(rows: &[Row]) -> String {
    let verdicts: Vec<String> =
        rows.iter().map(|r| r.verdict.as_ref().map_or("-".into(), Verdict::label)).collect();
    let w = |(r, v): (&Row, &String)| {
        (r.figure.len(), r.metric.len(), r.measured.len(), r.published.len(), v.len())
    };
    let (a, b, c, d, e) = rows.iter().zip(&verdicts).map(w).fold((6, 6, 7, 9, 10), |x, y| {
        (x.0.max(y.0), x.1.max(y.1), x.2.max(y.2), x.3.max(y.3), x.4.max(y.4))
    });
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:<a$}  {:<b$}  {:>c$}  {:<d$}  {:<e$}  note",
        "figure", "metric", "ssdlab", "published", "reproduced"
    );
    for (r, v) in rows.iter().zip(&verdicts) {
        let _ = writeln!(
            t,
            "{:<a$}  {:<b$}  {:>c$}  {:<d$}  {v:<e$}  {}",
            r.figure, r.metric, r.measured, r.published, r.note
        );
    }
    t
}
