//! Writing an event trace as a Chrome / Perfetto trace file (the JSON "Trace Event Format"):
//! one process per kind of resource — host queues, controller cores, flash channels, flash dies
//! — with a thread (track) per resource, complete (`X`) slices for busy time, and a flow per
//! host request that links its command on the host queue to the flash work it caused.
//!
//! Slices on one track must nest; spans of one resource that overlap without nesting (the
//! commands in flight on one queue, the planes of a multi-plane operation) are spread over
//! lanes: `SQ1 #0`, `SQ1 #1`, ... Load the file in <https://ui.perfetto.dev> or
//! `chrome://tracing`.

use std::collections::BTreeMap;
use std::io::{self, Write};

use firmware::config::DeviceConfig;
use serde_json::{Value, json};
use sim::SimTime;
use sim::trace::{Span, Trace, Track};

/// Trace processes, in display order.
const HOST: u32 = 1;
const CORES: u32 = 2;
const CHANNELS: u32 = 3;
const DIES: u32 = 4;

/// Writes `trace` of a device configured as `cfg` to `out`.
pub fn write(trace: &Trace, cfg: &DeviceConfig, out: &mut impl Write) -> io::Result<()> {
    let lanes = assign_lanes(&trace.spans);
    let mut events: Vec<Value> = Vec::with_capacity(trace.spans.len() * 2 + 64);
    for (pid, name) in [
        (HOST, "host queues"),
        (CORES, "controller cores"),
        (CHANNELS, "flash channels"),
        (DIES, "flash dies"),
    ] {
        events.push(json!({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}}));
        events.push(json!({"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": pid}}));
    }
    let mut named: BTreeMap<(u32, u32), String> = BTreeMap::new();
    for (span, &lane) in trace.spans.iter().zip(&lanes) {
        let (pid, tid) = thread(span.track, lane);
        named.entry((pid, tid)).or_insert_with(|| thread_name(span.track, lane, cfg));
    }
    for (&(pid, tid), name) in &named {
        events
            .push(json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}));
        events.push(json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}}));
    }
    for (span, &lane) in trace.spans.iter().zip(&lanes) {
        let (pid, tid) = thread(span.track, lane);
        let mut e = json!({
            "ph": "X",
            "name": span.name.as_str(),
            "cat": category(span.track),
            "pid": pid,
            "tid": tid,
            "ts": us(span.start),
            "dur": span.dur.as_nanos() as f64 / 1e3,
        });
        if let Some(r) = span.request {
            e["args"] = json!({"request": r});
        }
        events.push(e);
    }
    flows(trace, &lanes, &mut events);
    let doc = json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "generator": concat!("ssdlab ", env!("CARGO_PKG_VERSION")),
            "device": cfg.name,
            "requests": trace.requests,
            "spans_dropped": trace.dropped,
        },
    });
    serde_json::to_writer(&mut *out, &doc)?;
    out.write_all(b"\n")
}

/// Microseconds, the trace format's unit (fractions keep nanoseconds).
fn us(t: SimTime) -> f64 {
    t.as_nanos() as f64 / 1e3
}

fn category(track: Track) -> &'static str {
    match track {
        Track::HostQueue(_) => "host",
        Track::Core(_) => "core",
        Track::Channel(_) => "channel",
        Track::Die(_) => "die",
    }
}

/// Process and thread of a track's lane.
fn thread(track: Track, lane: u32) -> (u32, u32) {
    match track {
        Track::HostQueue(q) => (HOST, q as u32 * 1000 + lane),
        Track::Core(c) => (CORES, c as u32 * 1000 + lane),
        Track::Channel(c) => (CHANNELS, c * 1000 + lane),
        Track::Die(d) => (DIES, d * 1000 + lane),
    }
}

fn thread_name(track: Track, lane: u32, cfg: &DeviceConfig) -> String {
    let lane = if lane == 0 { String::new() } else { format!(" #{lane}") };
    let g = &cfg.geometry;
    match track {
        Track::HostQueue(q) => format!("SQ{q}{lane}"),
        Track::Core(c) => {
            let name = cfg.controller.cores.get(c as usize).map_or("?", |s| s.name.as_str());
            format!("core {c}: {name}{lane}")
        }
        Track::Channel(c) => format!("channel {c}{lane}"),
        Track::Die(d) => {
            let (ch, way, die) = (d / (g.ways * g.dies), (d / g.dies) % g.ways, d % g.dies);
            format!("die {d} (ch {ch} way {way} die {die}){lane}")
        }
    }
}

/// The lane of every span: on each track, the first lane free when the span starts (spans
/// that start when another ends may share its lane).
fn assign_lanes(spans: &[Span]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].track, spans[i].start, std::cmp::Reverse(spans[i].dur), i));
    let mut lanes = vec![0u32; spans.len()];
    let mut ends: BTreeMap<Track, Vec<SimTime>> = BTreeMap::new();
    for i in order {
        let s = &spans[i];
        let free = ends.entry(s.track).or_default();
        let end = s.start + s.dur;
        match free.iter().position(|&e| e <= s.start) {
            Some(l) => {
                free[l] = end;
                lanes[i] = l as u32;
            }
            None => {
                free.push(end);
                lanes[i] = free.len() as u32 - 1;
            }
        }
    }
    lanes
}

/// A flow per request: from its command's slice on the host queue, through the slices of the
/// flash transactions it caused, back to the host slice at completion.
fn flows(trace: &Trace, lanes: &[u32], events: &mut Vec<Value>) {
    let mut by_request: BTreeMap<u64, (Option<usize>, Vec<usize>)> = BTreeMap::new();
    for (i, s) in trace.spans.iter().enumerate() {
        let Some(r) = s.request else { continue };
        let entry = by_request.entry(r).or_default();
        match s.track {
            Track::HostQueue(_) => entry.0 = Some(i),
            Track::Channel(_) | Track::Die(_) => entry.1.push(i),
            Track::Core(_) => {}
        }
    }
    for (r, (host, mut steps)) in by_request {
        let Some(h) = host else { continue }; // the command completed after the trace ended
        let hs = &trace.spans[h];
        let (pid, tid) = thread(hs.track, lanes[h]);
        steps.sort_by_key(|&i| (trace.spans[i].start, i));
        let flow = |ph: &str, pid: u32, tid: u32, ts: f64| json!({"ph": ph, "id": r, "name": "request", "cat": "request", "pid": pid, "tid": tid, "ts": ts, "bp": "e"});
        events.push(flow("s", pid, tid, us(hs.start)));
        for i in steps {
            let s = &trace.spans[i];
            let (p, t) = thread(s.track, lanes[i]);
            events.push(flow("t", p, t, us(s.start)));
        }
        // Inside the host slice, just before it ends.
        let end = hs.start + hs.dur;
        let at = if hs.dur.as_nanos() > 0 { us(end) - 0.0005 } else { us(end) };
        events.push(flow("f", pid, tid, at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::SimDuration;

    fn span(track: Track, start: u64, dur: u64) -> Span {
        Span {
            track,
            start: SimTime::from_nanos(start),
            dur: SimDuration::from_nanos(dur),
            name: "x".into(),
            request: None,
        }
    }

    #[test]
    fn overlapping_spans_get_separate_lanes_and_touching_ones_share() {
        let q = Track::HostQueue(1);
        let spans = vec![span(q, 0, 10), span(q, 5, 10), span(q, 10, 5), span(Track::Core(0), 0, 100)];
        assert_eq!(assign_lanes(&spans), vec![0, 1, 0, 0]);
    }
}
