//! Event tracing: spans of time on named tracks — controller cores (recorded by the executor
//! whenever a task computes or a core switches task), flash channels and dies, host queues —
//! each tagged with the host request it serves, if any. Nothing is recorded unless a trace is
//! active ([`Cx::trace_start`](crate::Cx::trace_start)); an active trace keeps only what falls
//! in its window:
//!
//! * spans that start in `[from, until)`;
//! * of the requests submitted in that window, the first `max_requests` (admitted in the order
//!   they ask); spans of other requests are dropped, and once every admitted request has
//!   finished the window closes;
//! * at most `max_spans` spans (then it stops and counts what it dropped).
//!
//! The ssdlab crate turns a [`Trace`] into a Chrome / Perfetto trace file.

use crate::task::Label;
use crate::time::{SimDuration, SimTime};

/// Where a span is drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Track {
    /// A controller core, by index.
    Core(u16),
    /// A flash channel.
    Channel(u32),
    /// A flash die (flat index).
    Die(u32),
    /// A host submission queue: one span per command, submission to completion.
    HostQueue(u16),
}

/// A stretch of busy time.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Its track.
    pub track: Track,
    /// Start.
    pub start: SimTime,
    /// Length.
    pub dur: SimDuration,
    /// What it is (a task name, `read`, `program`, ...).
    pub name: Label,
    /// The host request it serves.
    pub request: Option<u64>,
}

/// What to keep.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TraceWindow {
    /// Keep spans starting at or after this instant.
    pub from: SimTime,
    /// ... and before this one.
    pub until: SimTime,
    /// Requests to follow (submitted in the window, in order).
    pub max_requests: u64,
    /// Spans to keep at most.
    pub max_spans: usize,
}

impl Default for TraceWindow {
    /// The first 1000 requests, at most 2 million spans.
    fn default() -> Self {
        TraceWindow { from: SimTime::ZERO, until: SimTime::MAX, max_requests: 1000, max_spans: 2_000_000 }
    }
}

/// A finished trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// Kept spans, in the order they were recorded.
    pub spans: Vec<Span>,
    /// Requests followed.
    pub requests: u64,
    /// Spans dropped because `max_spans` was reached.
    pub dropped: u64,
}

/// An active trace.
#[derive(Debug)]
pub(crate) struct Recorder {
    window: TraceWindow,
    /// Admitted request ids (few: a sorted vector).
    admitted: Vec<u64>,
    open: u64,
    trace: Trace,
}

impl Recorder {
    pub fn new(window: TraceWindow) -> Self {
        Recorder { window, admitted: Vec::new(), open: 0, trace: Trace::default() }
    }

    /// A request was submitted at `now`: follow it if the window has room.
    pub fn admit(&mut self, id: u64, now: SimTime) -> bool {
        let w = &self.window;
        if now < w.from || now >= w.until || self.trace.requests >= w.max_requests {
            return false;
        }
        if let Err(at) = self.admitted.binary_search(&id) {
            self.admitted.insert(at, id);
            self.trace.requests += 1;
            self.open += 1;
        }
        true
    }

    /// A request finished at `now`; the window closes when the last admitted one does.
    pub fn finish(&mut self, id: u64, now: SimTime) {
        if self.admitted.binary_search(&id).is_ok() {
            self.open -= 1;
            if self.open == 0 && self.trace.requests >= self.window.max_requests {
                self.window.until = self.window.until.min(now);
            }
        }
    }

    /// Whether a span starting at `start` for `request` would be kept.
    pub fn wants(&self, start: SimTime, request: Option<u64>) -> bool {
        match request {
            Some(id) => self.admitted.binary_search(&id).is_ok(),
            None => start >= self.window.from && start < self.window.until,
        }
    }

    pub fn record(&mut self, span: Span) {
        if !self.wants(span.start, span.request) {
            return;
        }
        if self.trace.spans.len() >= self.window.max_spans {
            self.trace.dropped += 1;
            return;
        }
        self.trace.spans.push(span);
    }

    pub fn into_trace(self) -> Trace {
        self.trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(t: u64, request: Option<u64>) -> Span {
        Span {
            track: Track::Core(0),
            start: SimTime::from_nanos(t),
            dur: SimDuration::from_nanos(1),
            name: "x".into(),
            request,
        }
    }

    #[test]
    fn keeps_admitted_requests_and_closes_after_the_last() {
        let w = TraceWindow { from: SimTime::from_nanos(10), max_requests: 2, ..TraceWindow::default() };
        let mut r = Recorder::new(w);
        assert!(!r.admit(1, SimTime::from_nanos(5)), "before the window");
        assert!(r.admit(2, SimTime::from_nanos(10)));
        assert!(r.admit(3, SimTime::from_nanos(11)));
        assert!(!r.admit(4, SimTime::from_nanos(12)), "window full");
        r.record(span(5, None)); // before the window
        r.record(span(12, Some(1))); // not admitted
        r.record(span(13, Some(2)));
        r.record(span(14, None));
        r.finish(2, SimTime::from_nanos(20));
        r.finish(3, SimTime::from_nanos(30));
        r.record(span(31, None)); // after the last admitted request finished
        r.record(span(32, Some(3))); // still admitted: its late spans are kept
        let t = r.into_trace();
        let starts: Vec<u64> = t.spans.iter().map(|s| s.start.as_nanos()).collect();
        assert_eq!(starts, vec![13, 14, 32]);
        assert_eq!(t.requests, 2);
    }

    #[test]
    fn stops_at_the_span_budget() {
        let mut r = Recorder::new(TraceWindow { max_spans: 2, ..TraceWindow::default() });
        for t in 0..5 {
            r.record(span(t, None));
        }
        let t = r.into_trace();
        assert_eq!((t.spans.len(), t.dropped), (2, 3));
    }
}
