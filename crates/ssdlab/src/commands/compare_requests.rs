//! `ssdlab compare LIVE.rec SIM.csv [--per-request OUT.csv]`: a recording of a live server
//! (`ssdlab serve --record`) beside its replay in simulation (`ssdlab replay LIVE.rec
//! --per-request SIM.csv`), request by request.
//!
//! The recording's requests that a replay issues (not flushes, not empty ones) are matched in
//! arrival order with the replay's commands in submission order (the controller's command
//! id): a timed replay submits them in the recording's order, one command each unless a
//! request is longer than the device's maximum transfer (then the counts differ and the
//! comparison says so). Each pair is checked for the same operation, offset and length (the
//! order) and the same queue pair; the summary gives mean, p50 and p99 of three latencies per
//! operation: what the server gave the client (request read to reply written, wall clock), what
//! the live model said (`device_ns`), and the simulation's.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use host::trace::{RECORDING_HEADER, Recorded, RecordedOp};

/// Whether `path` starts like a recording (its first bytes are a recording's header).
pub(super) fn is_recording(path: &Path) -> bool {
    let mut head = [0u8; 14];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)).is_ok()
        && &head == b"ssdlab record "
}

/// One simulated command of the replay's per-request CSV.
#[derive(Clone, Debug, PartialEq)]
struct Simulated {
    id: u64,
    qid: u16,
    op: String,
    offset: u64,
    len: u64,
    latency_ns: u64,
}

/// The recording's requests that a replay issues, in arrival order.
fn read_recording(path: &Path) -> Result<Vec<Recorded>> {
    let name = path.display();
    let f = std::fs::File::open(path).with_context(|| format!("opening {name}"))?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(f).lines().enumerate() {
        let line = line.with_context(|| format!("reading {name}"))?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if i == 0 || text.starts_with("ssdlab record ") {
            if text != RECORDING_HEADER {
                bail!("{name}:{}: not a version 1 recording header", i + 1);
            }
            continue;
        }
        let r = Recorded::parse(text.as_bytes()).map_err(|e| anyhow::anyhow!("{name}:{}: {e}", i + 1))?;
        if r.op != RecordedOp::Flush && r.len > 0 {
            out.push(r);
        }
    }
    Ok(out)
}

/// The replay's commands, in submission order.
fn read_simulated(path: &Path) -> Result<Vec<Simulated>> {
    let name = path.display();
    let f = std::fs::File::open(path).with_context(|| format!("opening {name}"))?;
    let mut lines = BufReader::new(f).lines();
    let header = lines.next().transpose().with_context(|| format!("reading {name}"))?.unwrap_or_default();
    let cols: Vec<&str> = header.split(',').collect();
    let col = |c: &str| {
        cols.iter().position(|h| *h == c).with_context(|| {
            format!("{name}: no column '{c}' (expected the CSV of `ssdlab replay --per-request`)")
        })
    };
    let (id, qid, op, offset, bytes, latency) =
        (col("id")?, col("qid")?, col("op")?, col("offset")?, col("bytes")?, col("latency_ns")?);
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        let line = line.with_context(|| format!("reading {name}"))?;
        let f: Vec<&str> = line.split(',').collect();
        let num = |c: usize| -> Result<u64> {
            f.get(c)
                .and_then(|v| v.parse().ok())
                .with_context(|| format!("{name}:{}: bad field {}", i + 2, cols[c]))
        };
        out.push(Simulated {
            id: num(id)?,
            qid: num(qid)? as u16,
            op: f.get(op).unwrap_or(&"").to_string(),
            offset: num(offset)?,
            len: num(bytes)?,
            latency_ns: num(latency)?,
        });
    }
    out.sort_by_key(|s| s.id);
    Ok(out)
}

/// Mean, p50 and p99 (nearest rank) of `ns`, in µs.
fn summary(ns: &mut [u64]) -> (f64, f64, f64) {
    if ns.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    ns.sort_unstable();
    let rank = |q: f64| ns[((q * ns.len() as f64).ceil() as usize).clamp(1, ns.len()) - 1] as f64 / 1e3;
    (ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1e3, rank(0.5), rank(0.99))
}

/// Where the two runs differ in what they did: requests whose operation, offset or length
/// differ (the order), and whose queue pair differs.
fn mismatches(live: &[Recorded], sim: &[Simulated]) -> (usize, usize) {
    let order = live
        .iter()
        .zip(sim)
        .filter(|(l, s)| l.op.trace_op().name() != s.op || l.offset != s.offset || l.len != s.len)
        .count();
    let queue = live.iter().zip(sim).filter(|(l, s)| l.queue != s.qid).count();
    (order, queue)
}

/// The comparison's text: order and queue checks, then per operation the three latencies.
fn render(live: &[Recorded], sim: &[Simulated]) -> String {
    let (order, queue) = mismatches(live, sim);
    let n = live.len();
    let mut out = format!(
        "{n} requests: {} of {n} in the same order (operation, offset, length), {} of {n} on the same queue pair\n",
        n - order,
        n - queue
    );
    out.push_str(&format!(
        "{:<7}{:<30}{:>8}{:>10}{:>10}{:>10}\n",
        "op", "latency", "count", "mean µs", "p50 µs", "p99 µs"
    ));
    let pct = |a: f64, b: f64| if b > 0.0 { (a / b - 1.0) * 100.0 } else { 0.0 };
    for op in ["read", "write", "trim", "all"] {
        let pick = |l: &Recorded| op == "all" || l.op.trace_op().name() == op;
        let pairs: Vec<(&Recorded, &Simulated)> = live.iter().zip(sim).filter(|(l, _)| pick(l)).collect();
        if pairs.is_empty() {
            continue;
        }
        let mut served: Vec<u64> = pairs.iter().map(|(l, _)| l.latency_ns).collect();
        let mut model: Vec<u64> = pairs.iter().filter_map(|(l, _)| l.device_ns).collect();
        let mut simulated: Vec<u64> = pairs.iter().map(|(_, s)| s.latency_ns).collect();
        let (s, m, x) = (summary(&mut served), summary(&mut model), summary(&mut simulated));
        let row = |what: &str, count: usize, v: (f64, f64, f64)| {
            format!("{op:<7}{what:<30}{count:>8}{:>10.1}{:>10.1}{:>10.1}\n", v.0, v.1, v.2)
        };
        out.push_str(&row("live, served (wall clock)", served.len(), s));
        if !model.is_empty() {
            out.push_str(&row("live, modelled", model.len(), m));
        }
        out.push_str(&row("simulated", simulated.len(), x));
        let diff = |what: &str, base: (f64, f64, f64)| {
            format!(
                "{op:<7}{what:<30}{:>8}{:>+9.1}%{:>+9.1}%{:>+9.1}%\n",
                "",
                pct(x.0, base.0),
                pct(x.1, base.1),
                pct(x.2, base.2)
            )
        };
        out.push_str(&diff("simulated vs served", s));
        if !model.is_empty() {
            out.push_str(&diff("simulated vs modelled", m));
        }
    }
    out
}

/// Writes the per-request table.
fn write_table(path: &Path, live: &[Recorded], sim: &[Simulated]) -> Result<()> {
    let name = path.display();
    let f = std::fs::File::create(path).with_context(|| format!("--per-request {name}: cannot create it"))?;
    let mut w = std::io::BufWriter::new(f);
    let mut write = || -> std::io::Result<()> {
        writeln!(
            w,
            "request,t_ns,conn,queue,op,offset,len,live_latency_ns,live_device_ns,sim_id,sim_qid,sim_latency_ns,same"
        )?;
        for (i, (l, s)) in live.iter().zip(sim).enumerate() {
            let same =
                l.op.trace_op().name() == s.op && l.offset == s.offset && l.len == s.len && l.queue == s.qid;
            writeln!(
                w,
                "{i},{},{},{},{},{},{},{},{},{},{},{},{}",
                l.t_ns,
                l.conn,
                l.queue,
                l.op.name(),
                l.offset,
                l.len,
                l.latency_ns,
                l.device_ns.map_or(String::new(), |d| d.to_string()),
                s.id,
                s.qid,
                s.latency_ns,
                u8::from(same)
            )?;
        }
        w.flush()
    };
    write().with_context(|| format!("writing {name}"))
}

/// `ssdlab compare LIVE.rec SIM.csv`.
pub(super) fn run(live: &Path, sim: &Path, table: Option<&Path>) -> Result<()> {
    let recorded = read_recording(live)?;
    let simulated = read_simulated(sim)?;
    if recorded.len() != simulated.len() {
        bail!(
            "{} has {} requests to replay but {} has {} commands: replay the recording with `ssdlab replay {} \
             --per-request {}` (a request longer than the device's maximum transfer becomes several commands and \
             cannot be matched one to one)",
            live.display(),
            recorded.len(),
            sim.display(),
            simulated.len(),
            live.display(),
            sim.display()
        );
    }
    if let Some(path) = table {
        write_table(path, &recorded, &simulated)?;
    }
    print!("{}", render(&recorded, &simulated));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(op: RecordedOp, offset: u64, queue: u16, latency_ns: u64, device_ns: u64) -> Recorded {
        Recorded {
            t_ns: 0,
            conn: 0,
            queue,
            op,
            offset,
            len: 4096,
            fua: false,
            error: None,
            latency_ns,
            device_ns: Some(device_ns),
        }
    }

    fn sim(id: u64, op: &str, offset: u64, qid: u16, latency_ns: u64) -> Simulated {
        Simulated { id, qid, op: op.into(), offset, len: 4096, latency_ns }
    }

    #[test]
    fn pairs_are_checked_for_order_and_queue_and_latencies_summarised() {
        let l = [
            live(RecordedOp::Read, 0, 1, 60_000, 40_000),
            live(RecordedOp::WriteZeroes, 4096, 2, 70_000, 50_000),
            live(RecordedOp::Read, 8192, 1, 80_000, 60_000),
        ];
        let s =
            [sim(0, "read", 0, 1, 40_000), sim(1, "write", 4096, 1, 55_000), sim(2, "read", 0, 1, 60_000)];
        assert_eq!(mismatches(&l, &s), (1, 1), "the third has another offset, the second another queue");
        let text = render(&l, &s);
        assert!(text.starts_with("3 requests: 2 of 3 in the same order (operation, offset, length), 2 of 3 on the same queue pair"), "{text}");
        let row = text.lines().find(|l| l.starts_with("read   simulated vs modelled")).unwrap();
        let last3: Vec<&str> = row.split_whitespace().rev().take(3).collect();
        assert_eq!(last3, ["+0.0%"; 3], "{row}");
        let row = text.lines().find(|l| l.starts_with("all    simulated vs modelled")).unwrap();
        assert!(row.contains("+3.3%"), "mean 51.67 against 50.0: {row}");
        assert_eq!(summary(&mut [5_000, 1_000, 3_000]), (3.0, 3.0, 5.0));
    }

    #[test]
    fn a_recording_is_told_from_a_report_by_its_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let (rec, json) = (dir.path().join("a.rec"), dir.path().join("a.json"));
        std::fs::write(
            &rec,
            format!("{RECORDING_HEADER}\n0 0 1 read 0 4096 - ok 5 4\n0 0 1 flush 0 0 - ok 5 4\n"),
        )
        .unwrap();
        std::fs::write(&json, "{}").unwrap();
        assert!(is_recording(&rec) && !is_recording(&json));
        assert_eq!(read_recording(&rec).unwrap().len(), 1, "flushes are not replayed");
    }
}
