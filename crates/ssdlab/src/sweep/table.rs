//! The results table: one row per run with its axis values, seed, status and headline
//! metrics ([`report::headlines`]), and where its report is. Written as Parquet or CSV for
//! analysis, and as JSON (`sweep.json`) for `ssdlab sweep plot` and the Python API.

use serde::{Deserialize, Serialize};
use toml::Value;

use super::plan::Plan;
use super::recipe::value_text;
use report::{MetricKind, Report, headlines};

/// A column's values; `None` is a missing value (a failed run's metrics, reads in a
/// write-only run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "values", rename_all = "snake_case")]
pub enum ColumnData {
    /// 64-bit integers.
    Int(Vec<Option<i64>>),
    /// 64-bit floats.
    Real(Vec<Option<f64>>),
    /// UTF-8 text.
    Text(Vec<Option<String>>),
    /// Booleans.
    Bool(Vec<Option<bool>>),
}

/// One named column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The column's name: `run`, an axis key, `seed`, `status`, a metric, ...
    pub name: String,
    /// Its values, one per row.
    #[serde(flatten)]
    pub data: ColumnData,
}

/// The whole table, column by column.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The schema of `sweep.json`: `ssdlab.sweep/1`.
    pub schema: String,
    /// The axis keys (the columns after `run`).
    pub axes: Vec<String>,
    /// The columns, every one as long.
    pub columns: Vec<Column>,
}

/// The schema identifier of `sweep.json`.
pub const SWEEP_SCHEMA: &str = "ssdlab.sweep/1";

/// What a run gave.
#[derive(Clone, Debug, PartialEq)]
pub enum RunResult {
    /// It ran; its headline metrics in [`headlines`] order.
    Done(Vec<Option<f64>>),
    /// It failed; why, on one line.
    Failed(String),
}

impl RunResult {
    /// The result of a report.
    pub fn of(report: &Report) -> RunResult {
        RunResult::Done(headlines().map(|h| (h.get)(report)).collect())
    }
}

impl ColumnData {
    /// Rows.
    pub fn len(&self) -> usize {
        match self {
            ColumnData::Int(v) => v.len(),
            ColumnData::Real(v) => v.len(),
            ColumnData::Text(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
        }
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` as a number, if it is one.
    pub fn number(&self, i: usize) -> Option<f64> {
        match self {
            ColumnData::Int(v) => v[i].map(|x| x as f64),
            ColumnData::Real(v) => v[i],
            ColumnData::Bool(v) => v[i].map(|b| f64::from(u8::from(b))),
            ColumnData::Text(_) => None,
        }
    }

    /// Row `i` as text (numbers as written in TOML), `None` if missing.
    pub fn text(&self, i: usize) -> Option<String> {
        match self {
            ColumnData::Int(v) => v[i].map(|x| x.to_string()),
            ColumnData::Real(v) => v[i].map(|x| Value::Float(x).to_string()),
            ColumnData::Text(v) => v[i].clone(),
            ColumnData::Bool(v) => v[i].map(|b| b.to_string()),
        }
    }
}

/// An axis's column: integers, reals (integers among reals become reals), booleans, or text
/// (anything else, as written in TOML).
fn axis_column(values: Vec<&Value>) -> ColumnData {
    let all = |f: fn(&Value) -> bool| values.iter().all(|v| f(v));
    if all(|v| v.is_integer()) {
        ColumnData::Int(values.iter().map(|v| v.as_integer()).collect())
    } else if all(|v| v.is_integer() || v.is_float()) {
        ColumnData::Real(values.iter().map(|v| v.as_float().or(v.as_integer().map(|i| i as f64))).collect())
    } else if all(|v| v.is_bool()) {
        ColumnData::Bool(values.iter().map(|v| v.as_bool()).collect())
    } else {
        ColumnData::Text(values.iter().map(|v| Some(value_text(v))).collect())
    }
}

impl Table {
    /// The table of the runs of `plan` that have a result (`results[i]` is run `i`'s), in
    /// sweep order.
    pub fn build(plan: &Plan, results: &[Option<RunResult>]) -> Table {
        let rows: Vec<usize> = (0..plan.runs.len()).filter(|&i| results[i].is_some()).collect();
        let run = |i: usize| &plan.runs[i];
        let result = |i: usize| results[i].as_ref().expect("rows have results");
        let mut columns = vec![Column {
            name: "run".into(),
            data: ColumnData::Int(rows.iter().map(|&i| Some(i as i64)).collect()),
        }];
        for (a, axis) in plan.axes.iter().enumerate() {
            let data = axis_column(rows.iter().map(|&i| &run(i).values[a]).collect());
            columns.push(Column { name: axis.key.clone(), data });
        }
        let text = |name: &str, f: &dyn Fn(usize) -> Option<String>| Column {
            name: name.into(),
            data: ColumnData::Text(rows.iter().map(|&i| f(i)).collect()),
        };
        columns.push(Column {
            name: "seed".into(),
            data: ColumnData::Int(rows.iter().map(|&i| Some(run(i).seed as i64)).collect()),
        });
        columns.push(text("status", &|i| {
            Some(if matches!(result(i), RunResult::Done(_)) { "ok" } else { "failed" }.into())
        }));
        columns.push(text("error", &|i| match result(i) {
            RunResult::Failed(e) => Some(e.clone()),
            RunResult::Done(_) => None,
        }));
        for (m, h) in headlines().enumerate() {
            let value = |i: usize| match result(i) {
                RunResult::Done(v) => v[m],
                RunResult::Failed(_) => None,
            };
            let data = match h.kind {
                MetricKind::Count => {
                    ColumnData::Int(rows.iter().map(|&i| value(i).map(|v| v as i64)).collect())
                }
                MetricKind::Real => ColumnData::Real(rows.iter().map(|&i| value(i)).collect()),
            };
            columns.push(Column { name: h.name.into(), data });
        }
        columns.push(text("hash", &|i| Some(run(i).hash.clone())));
        columns.push(text("report", &|i| match result(i) {
            RunResult::Done(_) => Some(super::store::report_path(&run(i).hash)),
            RunResult::Failed(_) => None,
        }));
        Table {
            schema: SWEEP_SCHEMA.into(),
            axes: plan.axes.iter().map(|a| a.key.clone()).collect(),
            columns,
        }
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.data.len())
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}
