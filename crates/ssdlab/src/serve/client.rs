//! What the clients saw, in wall-clock time: every request from the moment the device thread
//! read it to the moment its reply was written to the socket, per operation type, and every
//! error by the NBD error the client got. The device's own figures (latency from NVMe
//! submission to completion, IOPS over simulated time) stay in the report's `ops` section,
//! labelled simulated: with `--timing none` the simulation runs as fast as it can, so its
//! clock says little about what a client waited.

use std::collections::BTreeMap;
use std::time::Instant;

use host::live::{ClientOpStats, LiveStats};
use live::proto::Errno;
use sim::stats::LogHistogram;

/// Operation types, in report order.
pub(super) const OPS: [&str; 5] = ["read", "write", "flush", "trim", "write_zeroes"];

/// One operation type so far.
#[derive(Default)]
struct OpSeen {
    errors: u64,
    bytes: u64,
    first: Option<Instant>,
    last: Option<Instant>,
    latency: LogHistogram,
}

/// The clients' view, accumulated by the device thread.
#[derive(Default)]
pub(super) struct ClientView {
    ops: [OpSeen; OPS.len()],
    errors: BTreeMap<String, u64>,
}

impl ClientView {
    /// A request of type `op` (an index into [`OPS`]) read at `received` and answered at
    /// `sent`, with `bytes` of payload, failed with `errno` if set.
    pub(super) fn record(
        &mut self,
        op: usize,
        received: Instant,
        sent: Instant,
        bytes: u64,
        errno: Option<Errno>,
    ) {
        let o = &mut self.ops[op];
        o.first = Some(o.first.map_or(received, |f| f.min(received)));
        o.last = Some(o.last.map_or(sent, |l| l.max(sent)));
        o.latency.record(sent.saturating_duration_since(received).as_nanos() as u64);
        match errno {
            Some(e) => {
                o.errors += 1;
                self.error(e, 1);
            }
            None => o.bytes += bytes,
        }
    }

    /// `n` requests answered `errno` (also those the server answered itself).
    pub(super) fn error(&mut self, errno: Errno, n: u64) {
        if n > 0 {
            *self.errors.entry(errno_name(errno)).or_default() += n;
        }
    }

    /// Errors by NBD error name.
    pub(super) fn errors(&self) -> &BTreeMap<String, u64> {
        &self.errors
    }

    /// Per operation type, the types that were requested.
    pub(super) fn stats(&self) -> BTreeMap<String, ClientOpStats> {
        let us = |ns: f64| (ns / 1e3 * 10.0).round() / 10.0;
        OPS.iter()
            .zip(&self.ops)
            .filter(|(_, o)| o.latency.count() > 0)
            .map(|(name, o)| {
                let active_s = match (o.first, o.last) {
                    (Some(f), Some(l)) => l.saturating_duration_since(f).as_secs_f64(),
                    _ => 0.0,
                };
                let count = o.latency.count();
                // A lone request has no rate of its own: call it one per second.
                let per = if count > 1 && active_s > 0.0 { active_s } else { 1.0 };
                let stats = ClientOpStats {
                    count,
                    errors: o.errors,
                    bytes: o.bytes,
                    active_s,
                    iops: count as f64 / per,
                    mb_per_s: o.bytes as f64 / per / 1e6,
                    latency_mean_us: us(o.latency.mean()),
                    latency_p50_us: us(o.latency.quantile(0.5) as f64),
                    latency_p99_us: us(o.latency.quantile(0.99) as f64),
                    latency_max_us: us(o.latency.max() as f64),
                };
                (name.to_string(), stats)
            })
            .collect()
    }
}

/// The live part of the text summary: what the clients saw per operation type (wall clock),
/// connections, errors by errno, and how the image was opened.
pub fn live_summary(l: &LiveStats) -> String {
    let mut out = String::from("as the clients saw it (wall clock, request read to reply written):\n");
    out.push_str(&format!(
        "{:<13}{:>9}{:>10}{:>9}{:>10}{:>10}{:>10}{:>10}{:>8}{:>10}\n",
        "op", "count", "IOPS", "MB/s", "mean µs", "p50 µs", "p99 µs", "max µs", "errors", "active s"
    ));
    for (op, o) in &l.client {
        out.push_str(&format!(
            "{op:<13}{:>9}{:>10.0}{:>9.1}{:>10.1}{:>10.1}{:>10.1}{:>10.1}{:>8}{:>10.1}\n",
            o.count,
            o.iops,
            o.mb_per_s,
            o.latency_mean_us,
            o.latency_p50_us,
            o.latency_p99_us,
            o.latency_max_us,
            o.errors,
            o.active_s
        ));
    }
    let errors = if l.errors_by_errno.is_empty() {
        "no errors".to_string()
    } else {
        let by: Vec<String> = l.errors_by_errno.iter().map(|(e, n)| format!("{n} {e}")).collect();
        format!("errors: {}", by.join(", "))
    };
    let refused = if l.refused_connections > 0 {
        format!(" ({} refused)", l.refused_connections)
    } else {
        String::new()
    };
    out.push_str(&format!(
        "live: {} connections{refused}, {} requests, {errors}; served {:.1} s; image {}; open {:.0} ms",
        l.connections, l.requests, l.wall_s, l.opened, l.open_ms
    ));
    out
}

/// `EINVAL`, `ENOSPC`, ...: the name alone.
pub(super) fn errno_name(e: Errno) -> String {
    let full = e.to_string();
    full.split_whitespace().next().unwrap_or(&full).to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_lone_request_is_one_per_second_and_errors_are_counted_by_errno() {
        let mut v = ClientView::default();
        let t0 = Instant::now();
        v.record(0, t0, t0 + Duration::from_micros(50), 4096, None);
        v.record(1, t0, t0 + Duration::from_micros(10), 4096, Some(Errno::Inval));
        v.error(Errno::NoSpc, 2);
        v.error(Errno::Inval, 1);
        let s = v.stats();
        assert_eq!(s.keys().collect::<Vec<_>>(), ["read", "write"]);
        assert_eq!((s["read"].count, s["read"].iops, s["read"].bytes), (1, 1.0, 4096));
        assert!((s["read"].latency_mean_us - 50.0).abs() < 5.0, "{:?}", s["read"]);
        assert_eq!((s["write"].errors, s["write"].bytes), (1, 0));
        let errors: Vec<(&str, u64)> = v.errors().iter().map(|(k, n)| (k.as_str(), *n)).collect();
        assert_eq!(errors, [("EINVAL", 2), ("ENOSPC", 2)]);
    }

    /// Writes in one phase and reads in another: each is a rate over its own phase, not over
    /// the whole run.
    #[test]
    fn each_type_is_a_rate_over_its_own_phase() {
        let mut v = ClientView::default();
        let t0 = Instant::now();
        for i in 0..200u64 {
            let at = t0 + Duration::from_millis(10 * i);
            v.record(1, at, at + Duration::from_micros(100), 4096, None);
            let later = at + Duration::from_secs(100);
            v.record(0, later, later + Duration::from_micros(100), 4096, None);
        }
        let s = v.stats();
        for op in ["read", "write"] {
            assert!((s[op].iops - 200.0 / 1.99).abs() < 1.0, "{op}: {:?}", s[op]);
        }
    }

    /// 5,000 requests answered within 0.32 s are 15,600 a second, not 5,000 (the rate was
    /// taken over at least one second, which understated every run shorter than that).
    #[test]
    fn a_burst_shorter_than_a_second_is_a_rate_over_its_own_time() {
        let mut v = ClientView::default();
        let t0 = Instant::now();
        for i in 0..5000u64 {
            let at = t0 + Duration::from_nanos(64_000 * i);
            v.record(1, at, at + Duration::from_micros(60), 4096, None);
        }
        let s = &v.stats()["write"];
        let expect = 5000.0 / (4999.0 * 64e-6 + 60e-6);
        assert!((s.iops - expect).abs() < 1.0, "{s:?}, expected {expect:.0}");
        assert!((s.mb_per_s - expect * 4096.0 / 1e6).abs() < 0.01, "{s:?}");
    }
}
