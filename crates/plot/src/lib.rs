//! # ssdlab-plot: figures of a run report
//!
//! ```text
//!   ssdlab run --json FILE ──▶ Report ──┬──▶ ssdlab run --plot DIR
//!                                       └──▶ ssdlab plot FILE --out DIR
//!                                               │
//!              figures() ──▶ [Figure] ──▶ draw on the PNG and the SVG backend ──▶ DIR/NAME.{png,svg}
//! ```
//!
//! Each figure shows one aspect of the run, as the host saw it (latency, throughput) or as the
//! FTL and FIL did inside the device (GC, WAF, wear, busy channels and dies):
//!
//! | file            | what it shows                                                            |
//! |-----------------|--------------------------------------------------------------------------|
//! | `latency_cdf`   | latency CDF per operation, and its tail (99% to 99.999%) on a nines axis |
//! | `throughput`    | IOPS per direction and in total, and MB/s, over time                     |
//! | `latency_time`  | mean and p99 latency of the commands completed in each interval          |
//! | `gc`            | WAF per interval, free blocks, and GC units moved per second, over time  |
//! | `wear`          | erase-count histogram: blocks per erase count                            |
//! | `utilisation`   | busy % per channel, per die and per controller core                      |
//! | `power`         | mean power per interval by component; host memory and CPU of a host FTL  |
//! | `ecc`           | observed RBER, reads corrected / retried / uncorrectable, ECC-core busy, |
//! |                 | mean P/E cycles, over time (only for a device with bit errors)           |
//! | `zones`         | zones by state; blocks erased by resets and the commands' latency over   |
//! |                 | time, lined up (only for a zoned namespace)                              |
//! | `fdp`           | host bytes and media bytes (write-back, GC) per reclaim unit handle, and |
//! |                 | each handle's WAF against the device's (only with `[ftl.fdp]`)           |
//!
//! Reading them:
//!
//! 1. A time-series value describes its whole interval, so rates and latencies are drawn as
//!    steps over the interval; free blocks are a state at the interval's end, drawn point to
//!    point. A gap in a line is an interval without data (no command completed, no host write).
//! 2. Time is in us, ms or s, whichever keeps the ticks short; the axis says which.
//! 3. Latency axes are logarithmic in the CDF, and over time when the largest value is more
//!    than 50 times the smallest. The CDF's tail panel spaces 99%, 99.9%, ... evenly.
//! 4. A free-block axis that does not start at 0 says so in its heading.
//!
//! A figure whose data is empty (no operation ran, no time series, no blocks) is skipped and
//! named in [`Rendered::skipped`]; degenerate data (one point, all zeros, gaps) is drawn, and a
//! panel without data gives way to a line saying why.
//!
//! [`write_chart`] draws a sweep's chart (`ssdlab sweep plot`) in the same style.
//!
//! Text is drawn with DejaVu Sans, embedded in the crate (`assets/`, licence beside it) and
//! laid out through `ab_glyph`, so the same report gives the same PNG bytes and the same SVG on
//! every machine, fonts installed or not. SVG text names the family "DejaVu Sans" with a
//! `sans-serif` fallback for viewers that lack it.

mod axis;
mod chart;
mod draw;
mod error;
mod figure;
mod figures;
mod font;
mod output;
mod panel;
mod raster;

use std::path::{Path, PathBuf};

pub use chart::{Chart, Point, Series, write_chart};
pub use error::PlotError;
pub use figure::{Figure, Skipped, figures};
pub use output::Rendered;

/// Writes every figure of `report` into `dir` (which must exist) as PNG and SVG, and returns
/// the files written. Figures without data are skipped; [`render`] says which and why.
pub fn write_all(report: &report::Report, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    Ok(render(report, dir)?.files)
}

/// Like [`write_all`], with the figures skipped for lack of data.
pub fn render(report: &report::Report, dir: &Path) -> Result<Rendered, PlotError> {
    let (figures, skipped) = figures(report);
    let mut files = Vec::new();
    for figure in &figures {
        files.extend(output::write(figure, dir)?);
    }
    Ok(Rendered { files, skipped })
}
