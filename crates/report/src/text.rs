//! The compact text summary printed after a run.

use std::fmt::Write;

use sim::ByteSize;

use crate::schema::Report;

fn us(ns: f64) -> String {
    if ns >= 100_000.0 { format!("{:.0}", ns / 1e3) } else { format!("{:.1}", ns / 1e3) }
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// `v` rounded to a whole number with thousands separators: `-12,500`.
pub fn grouped(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if v < 0.0 && digits != "0" {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The summary table of a report.
pub fn summary(r: &Report) -> String {
    let mut s = String::new();
    let sim = sim::SimDuration::from_nanos(r.sim_time_ns);
    let window = sim::SimDuration::from_nanos(r.window_ns);
    let _ = writeln!(
        s,
        "device {} | seed {} | simulated {sim:#} (measured {window:#}) | wall {:.2}s, {:.0} requests/s",
        r.device.name, r.seed, r.wall_time_s, r.requests_per_wall_sec
    );
    if r.initial_state != "fresh" {
        let _ = writeln!(s, "started from: {}", r.initial_state);
    }
    if let Some(p) = &r.replay {
        let _ = writeln!(
            s,
            "replay {} ({}, {}): {} records -> {} commands | folded {}, widened {}, split {}, clipped {}, chunked {} | skipped: {} flushes, {} empty, {} bad lines{}",
            p.file,
            p.format,
            p.mode,
            p.records,
            p.commands,
            p.folded,
            p.widened,
            p.split,
            p.clipped,
            p.chunked,
            p.skipped_flushes,
            p.skipped_zero_length,
            p.bad_lines_skipped,
            if p.mode.starts_with("timed") {
                format!(
                    " | issue lag mean/p99/max {:.1}/{:.1}/{:.1} us",
                    p.lag_mean_us, p.lag_p99_us, p.lag_max_us
                )
            } else {
                String::new()
            }
        );
        if let Some(l) = p.layout.as_ref().filter(|l| l.volumes.len() > 1 || l.flows > 1) {
            let scale = if l.scale < 1.0 { format!(" scaled by {:.4}", l.scale) } else { String::new() };
            let _ = writeln!(
                s,
                "volumes: {} laid out by {}{scale}, {} folding onto shared addresses | {} flows on {} queues | {} records dropped",
                l.volumes.len(),
                l.kind,
                l.folded_volumes,
                l.flows,
                l.queues,
                p.dropped
            );
        }
    }
    let _ = writeln!(
        s,
        "{:<6} {:>9} {:>10} {:>9} | latency us: {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "op", "count", "IOPS", "MB/s", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"
    );
    for (name, o) in &r.ops {
        let l = &o.latency_ns;
        let _ = writeln!(
            s,
            "{:<6} {:>9} {:>10.0} {:>9.1} | {:>20} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}{}",
            name,
            o.throughput.count,
            o.throughput.iops,
            o.throughput.mb_per_s,
            us(l.mean),
            us(l.p50 as f64),
            us(l.p90 as f64),
            us(l.p99 as f64),
            us(l.p999 as f64),
            us(l.p9999 as f64),
            us(l.max as f64),
            if o.errors > 0 { format!("  ({} errors)", o.errors) } else { String::new() }
        );
    }
    if r.ops.len() > 1 {
        let _ = writeln!(
            s,
            "{:<6} {:>9} {:>10.0} {:>9.1}",
            "total", r.total.count, r.total.iops, r.total.mb_per_s
        );
    }
    if r.flows.len() > 1 {
        flow_table(&mut s, r);
    }
    if let Some(fairness) = r.fairness {
        let slowdowns: Vec<String> =
            r.flows.iter().map(|f| format!("{} {:.2}", f.name, f.slowdown.unwrap_or(f64::NAN))).collect();
        let _ = writeln!(
            s,
            "slowdown (mean latency shared / alone): {} | fairness {fairness:.3} (least / greatest slowdown)",
            slowdowns.join(", ")
        );
    }
    let names = [
        "queue", "fetch", "worker", "lock", "cache", "map", "fil-wait", "command", "xfer", "ecc", "dma",
        "compl", "fw",
    ];
    let mut header = format!("{:<6} mean us:", "phase");
    for n in names {
        let _ = write!(header, " {n:>8}");
    }
    let _ = writeln!(s, "{header}");
    for (name, o) in &r.ops {
        let mut line = format!("{name:<6}         ");
        for (_, d) in o.phases_ns.entries() {
            let _ = write!(line, " {:>8}", us(d.as_nanos() as f64));
        }
        let _ = writeln!(s, "{line}");
    }
    // With no host writes there is nothing to amplify (a checkpoint's translation pages alone
    // would read as a huge WAF).
    let waf = match r.waf.host_units {
        0 => "WAF - (no host writes)".to_string(),
        _ => format!("WAF {:.2} (data {:.2})", r.waf.waf, r.waf.data_waf),
    };
    // Units moved out of victims still being collected at the end count as moved, their
    // victims and erases not yet: say so, or "0 victims, 133902 units moved" reads as a bug.
    let in_progress = match r.gc.victims_in_progress {
        0 => String::new(),
        n => format!(
            " ({} in {n} collection{} in progress at the end)",
            r.gc.units_moved_in_progress,
            if n == 1 { "" } else { "s" }
        ),
    };
    let _ = writeln!(
        s,
        "{waf} | GC {} victims, {} units moved{in_progress}, {} erases, {} foreground waits | erases min/mean/max {}/{:.1}/{}",
        r.gc.invocations,
        r.gc.units_moved,
        r.gc.blocks_erased,
        r.gc.foreground_waits,
        r.wear.min,
        r.wear.mean,
        r.wear.max
    );
    if let Some(f) = &r.fdp {
        // Each handle the host wrote under: its WAF and what it wrote.
        let handles: Vec<String> = f
            .per_handle
            .iter()
            .filter_map(|h| h.waf.map(|w| format!("{} WAF {w:.2} ({:#})", h.handle, ByteSize(h.host_bytes))))
            .collect();
        let _ = writeln!(
            s,
            "FDP {} handles x {} groups, {} isolated, RU {:#} | handle {}",
            f.handles,
            f.reclaim_groups,
            f.isolation,
            ByteSize(f.ru_bytes),
            handles.join(", handle ")
        );
    }
    let d = &r.dram;
    if d.pending_budget_bytes > 0 {
        // Only DFTL has pending updates; the rest of the DRAM is configuration, in the JSON.
        let _ = writeln!(
            s,
            "DRAM {:#}: data cache {:#}, mapping {:#}, pending updates {:#} (high-water {:#}, GC rewrote {} translation pages for room), other {:#}",
            ByteSize(d.capacity_bytes),
            ByteSize(d.data_cache_bytes),
            ByteSize(d.mapping_bytes),
            ByteSize(d.pending_budget_bytes),
            ByteSize(d.pending_high_bytes),
            d.gc_tpage_writes,
            ByteSize(d.other_bytes)
        );
    }
    let e = &r.ecc;
    if e.pages_checked > 0 {
        let n = e.reads().max(1) as f64;
        let _ = writeln!(
            s,
            "ECC {} page reads ({} by GC and of translation pages): {} clean, {} corrected, {} retried, {} uncorrectable | {} bits in {} codewords corrected, {} decoder cycles | RBER {:.2e} observed, UBER {:.2e}",
            e.reads(),
            e.internal_reads,
            pct(e.clean_reads as f64 / n),
            pct(e.corrected_reads as f64 / n),
            pct(e.retried_reads as f64 / n),
            e.uncorrectable_reads,
            e.bits_corrected,
            e.codewords_corrected,
            e.decode_cycles,
            e.rber,
            e.uber
        );
    }
    if let Some(z) = &r.zones {
        let st = &z.stats;
        let [empty, io, eo, closed, ro, full, offline] = z.by_state;
        let _ = writeln!(
            s,
            "zones: {} of {} ({} writable) | now {empty} empty, {} open ({io} implicitly), {closed} closed, {full} full, {ro} read-only, {offline} offline | {} resets erased {} blocks, {:.3} ms each | {} finishes padded {} units | {} pages padded by flushes",
            z.zones,
            sim::ByteSize(z.zone_size),
            sim::ByteSize(z.zone_capacity),
            io + eo,
            st.resets,
            st.reset_erases,
            st.reset_ns as f64 / st.resets.max(1) as f64 / 1e6,
            st.finishes,
            st.finish_pad_units,
            st.flush_pad_pages,
        );
    }
    let m = &r.media;
    if m.program_failures + m.erase_failures + m.refresh_scans > 0 {
        let _ = writeln!(
            s,
            "media: {} grown bad blocks ({} failed programs, {} failed erases), {} units moved out of them | refresh: {} scans, {} blocks rewritten ({} units) | spares {}% (fewest in a plane: {}){}",
            m.grown_bad_blocks,
            m.program_failures,
            m.erase_failures,
            m.units_relocated,
            m.refresh_scans,
            m.blocks_refreshed,
            m.units_refreshed,
            r.smart.available_spare,
            m.min_spare_blocks.map_or("-".to_string(), |b| b.to_string()),
            m.read_only_at.map_or(String::new(), |t| format!(
                " | READ-ONLY since {:.3} s: the spares ran out",
                t.as_secs_f64()
            ))
        );
    }
    let cmt = r.cache.mapping.as_ref().map_or("full map".to_string(), |m| pct(m.ratio));
    let cores: Vec<String> =
        r.utilisation.cores.iter().map(|c| format!("{} {}", c.name, pct(c.busy))).collect();
    let _ = write!(
        s,
        "cache hits {} | CMT hits {} | channels {} | dies {} | cores: {}",
        pct(r.cache.data.ratio),
        cmt,
        pct(mean(&r.utilisation.channels)),
        pct(mean(&r.utilisation.dies)),
        cores.join(", ")
    );
    let e = &r.energy;
    if e.total_j > 0.0 {
        let parts: Vec<String> = e
            .mean_w
            .entries()
            .iter()
            .filter(|(_, w)| *w > 0.0005)
            .map(|(n, w)| format!("{n} {w:.3}"))
            .collect();
        let host = if e.host_w > 0.0 { format!(", host stack {:.2} W", e.host_w) } else { String::new() };
        let _ = write!(
            s,
            "\npower: device {:.2} W{host} ({} W) | energy {:.3} J, {:.1} uJ per command",
            e.device_w,
            parts.join(", "),
            e.total_j,
            e.joules_per_io * 1e6
        );
    }
    if let Some(h) = &r.host_stack {
        let _ = write!(
            s,
            "\nhost stack: {} cores {} busy | memory {:.1} MiB (peak {:.1} MiB)",
            h.cores,
            pct(h.cpu_busy),
            h.memory_bytes as f64 / (1 << 20) as f64,
            h.peak_memory_bytes as f64 / (1 << 20) as f64
        );
    }
    let a = &r.architecture;
    if !a.locks.is_empty() {
        let locks: Vec<String> = a
            .locks
            .iter()
            .filter(|l| l.acquisitions > 0)
            .map(|l| {
                format!(
                    "{} {} contended, wait mean/p99 {}/{} us",
                    l.class,
                    pct(l.contended_share),
                    us(l.mean_wait_ns).trim(),
                    us(l.p99_wait_ns as f64).trim()
                )
            })
            .collect();
        let _ = write!(s, "\n{} locks: {}", a.name, locks.join(" | "));
    }
    if !a.queues.is_empty() {
        let queues: Vec<String> = a
            .queues
            .iter()
            .filter(|q| q.items > 0)
            .map(|q| format!("{} mean {:.2} max {}", q.name, q.mean_occupancy, q.max_occupancy))
            .collect();
        let _ = write!(s, "\n{} stage queues: {}", a.name, queues.join(" | "));
    }
    if let Some(w) = &a.wait_list {
        let _ = write!(
            s,
            "\nwait list: {} sub-requests waited for their line, mean {} us, p99 {} us",
            w.waited,
            us(w.mean_ns).trim(),
            us(w.p99_ns as f64).trim()
        );
    }
    s
}

/// Where the time went, per operation: each phase's mean, its share of the mean latency, and
/// its median and 99th percentile (`ssdlab run --breakdown`).
pub fn breakdown(r: &Report) -> String {
    let mut s = String::new();
    for (name, o) in &r.ops {
        let total: u64 = o.phases_ns.entries().iter().map(|(_, d)| d.as_nanos()).sum();
        let _ = writeln!(
            s,
            "{name}: {} commands, mean latency {} us",
            o.throughput.count,
            us(o.latency_ns.mean).trim()
        );
        let _ = writeln!(
            s,
            "  {:<12} {:>10} {:>7} {:>10} {:>10}",
            "phase", "mean us", "share", "p50 us", "p99 us"
        );
        let rows =
            o.phases_ns.entries().into_iter().zip(o.phases_p50_ns.entries()).zip(o.phases_p99_ns.entries());
        for (((phase, mean), (_, p50)), (_, p99)) in rows {
            let share = mean.as_nanos() as f64 / total.max(1) as f64;
            let _ = writeln!(
                s,
                "  {:<12} {:>10} {:>7} {:>10} {:>10}",
                phase,
                us(mean.as_nanos() as f64),
                pct(share),
                us(p50.as_nanos() as f64),
                us(p99.as_nanos() as f64)
            );
        }
        let _ = writeln!(s, "  {:<12} {:>10} {:>7}", "total", us(total as f64), pct(1.0));
    }
    let _ = writeln!(s, "cores, busy by role:");
    for c in &r.utilisation.cores {
        let roles: Vec<String> = c.by_role.iter().map(|(role, b)| format!("{role} {}", pct(*b))).collect();
        let _ = writeln!(s, "  {:<12} {:>7}  {}", c.name, pct(c.busy), roles.join(", "));
    }
    s
}

/// Flows the text summary's flow table shows (the report's `flows` has them all).
const FLOW_ROWS: usize = 32;

/// One line per flow and direction (a run of several jobs, a replay's volumes): who got what.
fn flow_table(s: &mut String, r: &Report) {
    let us = |ns: f64| format!("{:.0}", ns / 1e3);
    // A partitioned data cache adds each flow's lines and read hit ratio (on its first row).
    let cached = r.flows.iter().any(|f| f.cache.is_some());
    // A partitioned CMT adds each flow's segments and lookup hit ratio (on its first row).
    let cmt_split = r.flows.iter().any(|f| f.cmt.as_ref().is_some_and(|c| c.segments.is_some()));
    // With several flows, the flash work each caused (on its first row).
    let flashed = r.flows.iter().any(|f| f.flash.is_some());
    let _ = write!(
        s,
        "{:<16} {:<6} {:>9} {:>10} {:>9} | latency us: {:>8} {:>8} {:>8} {:>8}",
        "flow (queues)", "op", "count", "IOPS", "MB/s", "mean", "p99", "p99.99", "max"
    );
    let _ = write!(
        s,
        "{}",
        if cached { format!(" | cache: {:>8} {:>6}", "lines", "hit%") } else { String::new() }
    );
    let _ = write!(
        s,
        "{}",
        if cmt_split { format!(" | CMT: {:>8} {:>6}", "segments", "hit%") } else { String::new() }
    );
    let _ = writeln!(
        s,
        "{}",
        if flashed {
            format!(" | flash: {:>9} {:>9} {:>9} {:>7}", "reads", "programs", "GC progs", "erases")
        } else {
            String::new()
        }
    );
    for f in r.flows.iter().take(FLOW_ROWS) {
        let queues = f.queues.iter().map(|q| q.to_string()).collect::<Vec<_>>().join(",");
        let mut label = format!("{} ({queues})", f.name);
        if label.chars().count() > 16 {
            label = format!("{}~", label.chars().take(15).collect::<String>());
        }
        for (k, (op, o)) in f.ops.iter().enumerate() {
            let l = &o.latency_ns;
            let _ = write!(
                s,
                "{label:<16} {op:<6} {:>9} {:>10.0} {:>9.1} | {:>20} {:>8} {:>8} {:>8}",
                o.throughput.count,
                o.throughput.iops,
                o.throughput.mb_per_s,
                us(l.mean),
                us(l.p99 as f64),
                us(l.p9999 as f64),
                us(l.max as f64),
            );
            let cache = match &f.cache {
                Some(c) if k == 0 => {
                    let hit = c.read_hit_ratio.map_or("-".into(), |h| format!("{:.1}", h * 100.0));
                    format!(" | {:>15} {hit:>6}", c.lines)
                }
                _ => String::new(),
            };
            let cmt = match &f.cmt {
                Some(c) if k == 0 && cmt_split => {
                    let hit = c.hit_ratio.map_or("-".into(), |h| format!("{:.1}", h * 100.0));
                    format!(" | {:>13} {hit:>6}", c.segments.map_or("-".into(), |n| n.to_string()))
                }
                _ => String::new(),
            };
            let flash = match &f.flash {
                Some(fl) if k == 0 => {
                    format!(" | {:>16} {:>9} {:>9} {:>7}", fl.reads, fl.programs, fl.gc_programs, fl.erases)
                }
                _ => String::new(),
            };
            let _ = writeln!(s, "{cache}{cmt}{flash}");
        }
    }
    if let Some(fl) = &r.flows_unattributed {
        let _ = writeln!(
            s,
            "no flow's (GC of blocks no flow wrote, translation pages, wear levelling, refresh): flash {} reads, {} programs ({} GC), {} erases",
            fl.reads, fl.programs, fl.gc_programs, fl.erases
        );
    }
    if r.flows.len() > FLOW_ROWS {
        let _ =
            writeln!(s, "... and {} more flows (the report's flows has them all)", r.flows.len() - FLOW_ROWS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_puts_a_comma_every_three_digits_and_keeps_the_sign() {
        let cases = [(0.0, "0"), (-0.2, "0"), (999.4, "999"), (1000.0, "1,000"), (-1234.5, "-1,234")];
        for (v, text) in cases {
            assert_eq!(grouped(v), text, "{v}");
        }
        assert_eq!(grouped(123_456_789.0), "123,456,789");
    }

    #[test]
    fn waf_is_shown_only_when_the_host_wrote_something() {
        let mut r = crate::compare::tests::report(1000.0);
        r.waf.flash_units = [0, 0, 501];
        r.waf.waf = 501.0;
        assert!(summary(&r).contains("WAF - (no host writes) | GC"), "{}", summary(&r));
        r.waf.host_units = 1000;
        r.waf.flash_units = [1100, 200, 20];
        (r.waf.waf, r.waf.data_waf) = (1.32, 1.3);
        assert!(summary(&r).contains("WAF 1.32 (data 1.30) | GC"), "{}", summary(&r));
    }

    #[test]
    fn units_moved_by_collections_in_progress_are_said_to_be() {
        let mut r = crate::compare::tests::report(1000.0);
        (r.gc.invocations, r.gc.units_moved, r.gc.blocks_erased) = (3, 900, 3);
        assert!(summary(&r).contains("GC 3 victims, 900 units moved, 3 erases,"), "{}", summary(&r));
        (r.gc.victims_in_progress, r.gc.units_moved_in_progress) = (1, 200);
        let want = "GC 3 victims, 900 units moved (200 in 1 collection in progress at the end), 3 erases,";
        assert!(summary(&r).contains(want), "{}", summary(&r));
        r.gc.victims_in_progress = 2;
        assert!(summary(&r).contains("(200 in 2 collections in progress at the end)"), "{}", summary(&r));
    }
}
