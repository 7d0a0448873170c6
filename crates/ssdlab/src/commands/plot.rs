//! `ssdlab plot REPORT --out DIR` (and `--plot DIR` on `run` and `replay`): draw a report's
//! figures as PNG and SVG.

use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::PlotArgs;

pub fn run(a: PlotArgs) -> Result<()> {
    let report = report::compare::read_report(&a.report)?;
    println!("{}", write(&report, &a.out)?);
    Ok(())
}

/// Draws every figure of `report` into `dir` (created if missing) and says what was written:
/// one line naming the directory and the number of files, then a line per figure left out.
pub(crate) fn write(report: &report::Report, dir: &Path) -> Result<String> {
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!("{} is not a directory (plots need a directory)", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating the plot directory {}", dir.display()))?;
    let rendered = plot::render(report, dir)?;
    let mut out = format!("plots: {} files in {}", rendered.files.len(), dir.display());
    for s in &rendered.skipped {
        out.push_str(&format!("\n  skipped {}: {}", s.name, s.reason));
    }
    Ok(out)
}
