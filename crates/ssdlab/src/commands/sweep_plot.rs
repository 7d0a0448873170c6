//! `ssdlab sweep plot RESULTS --x AXIS --y METRIC [--hue AXIS]`: a metric of a sweep against an
//! axis, a series per value of another axis, mean over the seeds with ±1 standard deviation.

use anyhow::Result;
use ssdlab::sweep::{ChartSpec, draw_chart};

use crate::cli::SweepPlotArgs;

pub fn run(a: SweepPlotArgs) -> Result<()> {
    let spec = ChartSpec { x: a.x, y: a.y, hue: a.hue, filter: a.filter };
    let out = draw_chart(&a.results, &spec, a.out.as_deref())?;
    println!("plot: {}", out.display());
    Ok(())
}
