//! The stats line written once a second while serving: what the clients saw in the last
//! second (wall clock, request read to reply written), and the device's state.

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
    pub(super) errors: u64,
    /// Payload bytes of the successful requests.
    pub(super) bytes: u64,
    /// Wall-clock latency, ns.
    pub(super) latency: LogHistogram,
}

/// Where the stats lines go.
pub(super) enum StatsOut {
    None,
    Stderr,
    File(std::fs::File),
}

/// One line's fields. `None` where there is nothing to say: no latency in a second without
/// requests, no WAF before anything reached the flash, no lag without `--timing model`.
#[derive(Debug, PartialEq)]
struct Line {
    t_s: f64,
    iops: f64,
    mb_per_s: f64,
    errors: u64,
    latency_p50_us: Option<f64>,
    latency_p99_us: Option<f64>,
    waf: Option<f64>,
    free_blocks: u64,
    lag_p99_us: Option<f64>,
}

impl Line {
    fn of(t_s: f64, secs: f64, t: &Tick, sample: &DeviceSample, lag: Option<&LogHistogram>) -> Line {
        let us = |ns: u64| (ns as f64 / 100.0).round() / 10.0;
        let seen = t.requests > 0;
        Line {
            t_s: (t_s * 10.0).round() / 10.0,
            iops: (t.requests as f64 / secs).round(),
            mb_per_s: (t.bytes as f64 / secs / 1e5).round() / 10.0,
            errors: t.errors,
            latency_p50_us: seen.then(|| us(t.latency.quantile(0.5))),
            latency_p99_us: seen.then(|| us(t.latency.quantile(0.99))),
            waf: (sample.flash_units > 0 && sample.host_units > 0)
                .then(|| (sample.flash_units as f64 / sample.host_units as f64 * 1000.0).round() / 1000.0),
            free_blocks: sample.free_blocks,
            lag_p99_us: lag.filter(|l| l.count() > 0).map(|l| us(l.quantile(0.99))),
        }
    }

    fn text(&self) -> String {
        let opt = |v: Option<f64>, width: usize, prec: usize| match v {
            Some(v) => format!("{v:>width$.prec$}"),
            None => format!("{:>width$}", "-"),
        };
        let mut line = format!(
            "[{:>6.1}s] {:>8.0} IOPS {:>8.1} MB/s  wall lat p50 {} µs p99 {} µs  WAF {}  free blocks {}",
            self.t_s,
            self.iops,
            self.mb_per_s,
            opt(self.latency_p50_us, 7, 1),
            opt(self.latency_p99_us, 7, 1),
            opt(self.waf, 4, 2),
            self.free_blocks
        );
        if self.errors > 0 {
            line.push_str(&format!("  errors {}", self.errors));
        }
        line
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "t_s": self.t_s,
            "iops": self.iops,
            "mb_per_s": self.mb_per_s,
            "errors": self.errors,
            "latency_p50_us": self.latency_p50_us,
            "latency_p99_us": self.latency_p99_us,
            "waf": self.waf,
            "free_blocks": self.free_blocks,
            "lag_p99_us": self.lag_p99_us,
        })
    }
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

    /// Writes the line for the last `secs` seconds.
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
        let sample = firmware::system::System::sample(dev);
        let lag = matches!(timing, Timing::Model { .. }).then_some(lag);
        let line = Line::of(started.elapsed().as_secs_f64(), secs, t, &sample, lag);
        let written = match self {
            StatsOut::None => true,
            StatsOut::Stderr => super::console::note(format_args!("{}", line.text())),
            StatsOut::File(f) => writeln!(f, "{}", line.json()).is_ok(),
        };
        // Stats are never worth the device: a stream that failed once gets no more lines.
        if !written {
            *self = StatsOut::None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(host_units: u64, flash_units: u64) -> DeviceSample {
        DeviceSample { host_units, flash_units, free_blocks: 100, ..DeviceSample::default() }
    }

    /// Issue 17, item 4: the line said `WAF 0.00` before the first flush, and made up
    /// latencies in a second without requests.
    #[test]
    fn the_line_is_right_when_idle_before_the_first_flush_and_with_one_request() {
        let idle = Line::of(5.0, 1.0, &Tick::default(), &sample(0, 0), None);
        assert_eq!((idle.iops, idle.latency_p50_us, idle.waf), (0.0, None, None));
        assert!(
            idle.text().contains("wall lat p50       - µs") && idle.text().contains("WAF    -"),
            "{}",
            idle.text()
        );
        assert_eq!(idle.json()["waf"], serde_json::Value::Null);

        let mut one = Tick { requests: 1, bytes: 4096, ..Tick::default() };
        one.latency.record(80_000);
        let cached = Line::of(6.0, 1.0, &one, &sample(1, 0), None);
        assert_eq!((cached.iops, cached.waf), (1.0, None), "one request in a second is 1 IOPS");
        assert!(cached.latency_p50_us.is_some_and(|l| (l - 80.0).abs() < 8.0), "{cached:?}");

        let flushed = Line::of(7.0, 1.0, &Tick::default(), &sample(4, 5), None);
        assert_eq!(flushed.waf, Some(1.25));
        let failed =
            Line::of(8.0, 1.0, &Tick { requests: 2, errors: 2, ..Tick::default() }, &sample(4, 5), None);
        assert!(failed.text().ends_with("errors 2"), "{}", failed.text());
    }
}
