//! The stats line written once a second while serving.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use firmware::device::Device;
use host::series::DeviceSample;
use sim::stats::LogHistogram;

use super::Timing;

/// The once-a-second numbers.
#[derive(Default)]
pub(super) struct Tick {
    pub(super) requests: u64,
    pub(super) bytes: u64,
    pub(super) latency: LogHistogram,
}

/// Where the stats lines go.
pub(super) enum StatsOut {
    None,
    Stderr,
    File(std::fs::File),
}

impl StatsOut {
    pub(super) fn open(path: Option<&Path>) -> Result<StatsOut> {
        Ok(match path {
            None => StatsOut::None,
            Some(p) if p == Path::new("-") => StatsOut::Stderr,
            Some(p) => {
                StatsOut::File(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?)
            }
        })
    }

    pub(super) fn line(
        &mut self,
        dev: &Device,
        started: Instant,
        secs: f64,
        t: &Tick,
        lag: &LogHistogram,
        timing: Timing,
    ) {
        if matches!(self, StatsOut::None) {
            return;
        }
        let s = DeviceSample::of(&dev.ftl);
        let waf = if s.host_units == 0 { 0.0 } else { s.flash_units as f64 / s.host_units as f64 };
        let us = |ns: u64| ns as f64 / 1e3;
        let t_s = started.elapsed().as_secs_f64();
        let iops = t.requests as f64 / secs;
        let mb_per_s = t.bytes as f64 / secs / 1e6;
        let (p50, p99) = (us(t.latency.quantile(0.5)), us(t.latency.quantile(0.99)));
        let written = match self {
            StatsOut::None => true,
            StatsOut::Stderr => super::console::note(format_args!(
                "[{t_s:>6.1}s] {iops:>8.0} IOPS {mb_per_s:>8.1} MB/s  lat p50 {p50:>7.1} µs p99 {p99:>7.1} µs  WAF {waf:.2}  free blocks {}",
                s.free_blocks
            )),
            StatsOut::File(f) => {
                let line = serde_json::json!({
                    "t_s": (t_s * 10.0).round() / 10.0,
                    "iops": iops.round(),
                    "mb_per_s": (mb_per_s * 10.0).round() / 10.0,
                    "latency_p50_us": p50,
                    "latency_p99_us": p99,
                    "waf": (waf * 1000.0).round() / 1000.0,
                    "free_blocks": s.free_blocks,
                    "lag_p99_us": if matches!(timing, Timing::Model { .. }) { us(lag.quantile(0.99)) } else { 0.0 },
                });
                writeln!(f, "{line}").is_ok()
            }
        };
        // Stats are never worth the device: a stream that failed once gets no more lines.
        if !written {
            *self = StatsOut::None;
        }
    }
}
