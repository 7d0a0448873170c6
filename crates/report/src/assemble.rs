//! Building a [`Report`] from a finished run.

use std::collections::BTreeMap;
use std::time::Duration;

use firmware::fil::FlowTag;
use firmware::system::{System, Totals};
use host::run::HostResults;
use host::workload::{IoOp, JobSpec};

use crate::resources::{EnergyReport, HostReport};
use crate::schema::*;

/// What the report needs besides the device and the host results.
pub struct RunInfo {
    /// The run's seed.
    pub seed: u64,
    /// The jobs.
    pub jobs: Vec<JobSpec>,
    /// The device's state before the run: `fresh`, a preconditioning, or a snapshot.
    pub initial_state: String,
    /// Wall-clock time the simulation took.
    pub wall: Duration,
}

/// The mean latency of every command in `ops`, all directions together, ns (`None` if none
/// completed).
pub fn mean_latency_ns(ops: &BTreeMap<String, OpReport>) -> Option<f64> {
    let (n, sum) = ops.values().fold((0u64, 0.0), |(n, sum), o| {
        (n + o.throughput.count, sum + o.latency_ns.mean * o.throughput.count as f64)
    });
    (n > 0).then(|| sum / n as f64)
}

/// Records what flow `flow` measured alone (its mean latency, ns), its slowdown, and, once
/// every flow has one, the fairness index.
pub fn set_alone(report: &mut Report, flow: usize, alone_mean_ns: Option<f64>) {
    let Some(f) = report.flows.get_mut(flow) else { return };
    let shared = mean_latency_ns(&f.ops);
    f.alone_latency_mean_ns = alone_mean_ns;
    f.slowdown = match (shared, alone_mean_ns) {
        (Some(s), Some(a)) if a > 0.0 => Some(s / a),
        _ => None,
    };
    let slowdowns: Option<Vec<f64>> = report.flows.iter().map(|f| f.slowdown).collect();
    report.fairness = slowdowns.filter(|s| !s.is_empty()).map(|s| {
        let (min, max) = s.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        min / max
    });
}

/// Each direction that ran in `ops` (measured over `window` seconds), and all of them together.
fn ops_report(ops: &[host::run::OpMetrics; 3], window: f64) -> (BTreeMap<String, OpReport>, Throughput) {
    let mut out = BTreeMap::new();
    let mut total = Throughput::default();
    let mut total_bytes = 0;
    for op in IoOp::ALL {
        let m = &ops[op as usize];
        if m.count == 0 && m.errors == 0 {
            continue;
        }
        let t = Throughput {
            count: m.count,
            iops: m.count as f64 / window,
            mb_per_s: m.bytes as f64 / window / 1e6,
        };
        total.count += m.count;
        total_bytes += m.bytes;
        out.insert(
            op.name().to_string(),
            OpReport {
                throughput: t,
                bytes: m.bytes,
                errors: m.errors,
                latency_ns: m.latency.summary(),
                phases_ns: m.phases.mean(m.count),
                phases_p50_ns: phase_quantile(&m.phase_hist, 0.5),
                phases_p99_ns: phase_quantile(&m.phase_hist, 0.99),
                latency_cdf_ns: CDF_QUANTILES.iter().map(|&q| [q, m.latency.quantile(q) as f64]).collect(),
            },
        );
    }
    total.iops = total.count as f64 / window;
    total.mb_per_s = total_bytes as f64 / window / 1e6;
    (out, total)
}

/// The report of a finished run.
pub fn assemble(dev: &dyn System, host: &HostResults, info: &RunInfo) -> Report {
    let sim_time = dev.sim().now();
    let window = host.window().as_secs_f64().max(1e-12);
    let (ops, total) = ops_report(&host.ops, window);
    let totals = dev.totals();
    // Flash work per flow: with more than one flow, and as many as the FIL's tags tell apart.
    let several = (2..=FlowTag::FLOWS).contains(&host.flows.len());
    let flows = host
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let window = f.window_end.saturating_since(host.window_start);
            let (ops, total) = ops_report(&f.ops, window.as_secs_f64().max(1e-12));
            FlowReport {
                name: f.name.clone(),
                queues: f.queues.clone(),
                window_ns: window.as_nanos(),
                ops,
                total,
                alone_latency_mean_ns: None,
                slowdown: None,
                cache: f.cache.map(|c| FlowCache {
                    lines: c.capacity,
                    read_hits: c.hits,
                    read_misses: c.misses,
                    read_hit_ratio: (c.hits + c.misses > 0)
                        .then(|| c.hits as f64 / (c.hits + c.misses) as f64),
                }),
                cmt: f.cmt.map(|c| FlowCmt {
                    segments: c.segments,
                    hits: c.hits,
                    misses: c.misses,
                    hit_ratio: (c.hits + c.misses > 0).then(|| c.hits as f64 / (c.hits + c.misses) as f64),
                }),
                flash: several.then(|| FlowFlash::new(&totals.fil.flow(FlowTag::of_flow(i as u32)))),
            }
        })
        .collect();

    let st = &totals.ftl;
    let fil = &totals.fil;
    let elapsed = sim_time.saturating_since(sim::SimTime::ZERO);
    let counts: Vec<f64> = totals.erase_counts.iter().map(|&c| c as f64).collect();
    let n = counts.len().max(1) as f64;
    let mean = counts.iter().sum::<f64>() / n;
    let wear = WearReport {
        min: counts.iter().copied().fold(f64::MAX, f64::min).min(u32::MAX as f64) as u32,
        mean,
        max: counts.iter().copied().fold(0.0, f64::max) as u32,
        stddev: (counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n).sqrt(),
        histogram: {
            let mut h = vec![0u64; counts.iter().copied().fold(0.0, f64::max) as usize + 1];
            for &c in &counts {
                h[c as usize] += 1;
            }
            h
        },
    };
    let (hits, misses) = totals.cache;
    let (to_device, to_host) = totals.link;
    let secs = elapsed.as_secs_f64().max(1e-12);
    let timeseries = host.series.as_ref().map(timeseries).unwrap_or_default();
    let energy = host.series.as_ref().map(|s| energy(s, total.count)).unwrap_or_default();
    // Host CPU over the run (the series' first sample to its last), not since the simulation
    // started: a system may have run before.
    let run_busy = host.series.as_ref().and_then(|s| {
        let last = s.points.last()?;
        let busy = last.device.host_busy_ns.saturating_sub(s.start_device.host_busy_ns) as f64 / 1e9;
        Some(busy / last.end.saturating_since(s.start).as_secs_f64().max(1e-12))
    });
    let host_stack = totals.host.as_ref().map(|h| HostReport {
        cores: h.cores,
        cpu_busy: run_busy.unwrap_or(h.busy.as_secs_f64() / secs) / h.cores.max(1) as f64,
        memory_bytes: h.memory,
        peak_memory_bytes: h.peak_memory,
        memory_by_use: h.memory_by_use.iter().cloned().collect(),
    });
    Report {
        schema: SCHEMA.to_string(),
        ssdlab_version: env!("CARGO_PKG_VERSION").to_string(),
        seed: info.seed,
        device: dev.config().resolved(),
        workload: info.jobs.clone(),
        initial_state: info.initial_state.clone(),
        sim_time_ns: sim_time.as_nanos(),
        window_start_ns: host.window_start.as_nanos(),
        window_ns: host.window().as_nanos(),
        wall_time_s: info.wall.as_secs_f64(),
        requests_per_wall_sec: host.issued as f64 / info.wall.as_secs_f64().max(1e-9),
        ops,
        total,
        flows,
        fairness: None,
        flows_unattributed: several.then(|| {
            // Everything no flow caused, and what tags past the flows' counted (none expected).
            let mut rest = fil.flow(FlowTag::NONE);
            for c in fil.by_flow.iter().skip(host.flows.len() + 1) {
                rest.add(c);
            }
            FlowFlash::new(&rest)
        }),
        waf: WafReport {
            host_units: st.host_units_written,
            flash_units: st.units_programmed,
            waf: st.waf(),
            data_waf: st.data_waf(),
        },
        gc: GcReport {
            invocations: st.gc_invocations,
            units_moved: st.gc_units_moved,
            blocks_erased: st.blocks_erased,
            foreground_waits: st.foreground_gc_waits,
            wl_migrations: st.wl_migrations,
            free_blocks: totals.free_blocks,
            victims_in_progress: st.gc_victims_in_progress,
            units_moved_in_progress: st.gc_units_moved_in_progress,
        },
        wear,
        cache: CacheReport {
            data: HitRatio::new(hits, misses),
            mapping: totals.cmt.map(|(h, m)| HitRatio::new(h, m)),
            dirty_units: totals.dirty_units,
        },
        dram: dram(dev.config(), st),
        ecc: EccReport::new(st.ecc.clone()),
        media: st.media.clone(),
        zones: totals.zones.clone(),
        utilisation: Utilisation {
            channels: fil.channel_utilisation(elapsed),
            dies: fil.die_utilisation(elapsed),
            cores: dev
                .sim()
                .core_stats()
                .into_iter()
                .map(|c| CoreLoad {
                    busy: c.busy.as_secs_f64() / secs,
                    by_role: c.by_role.iter().map(|(r, d)| (r.clone(), d.as_secs_f64() / secs)).collect(),
                    name: c.name,
                })
                .collect(),
        },
        flash: FlashReport {
            reads: fil.read.count,
            programs: fil.program.count,
            erases: fil.erase.count,
            by_source: fil.by_source,
            mean_read_ns: fil.read.latency.mean(),
            mean_program_ns: fil.program.latency.mean(),
            die_programs: fil.die_ops.iter().map(|o| o[1]).collect(),
            die_reads: fil.die_ops.iter().map(|o| o[0]).collect(),
            die_erases: fil.die_ops.iter().map(|o| o[2]).collect(),
        },
        link: LinkReport { to_device, to_host },
        smart: totals.smart.clone(),
        timeseries,
        replay: host.replay.clone(),
        live: host.live.clone(),
        energy,
        host_interface: host.interface.name().to_string(),
        host_stack,
        architecture: architecture(&totals, secs),
        fdp: fdp(dev.config(), st),
    }
}

/// The FDP section, if the device has FDP.
fn fdp(cfg: &firmware::config::DeviceConfig, st: &firmware::ftl::FtlStats) -> Option<FdpReport> {
    let (f, s) = (cfg.ftl.fdp.as_ref()?, st.fdp.as_ref()?);
    let geo = &cfg.geometry;
    let unit = geo.unit_bytes() as u64;
    let bytes = |units: u64| units * unit;
    let host = bytes(st.host_units_written);
    let media = bytes(st.units_programmed.iter().sum());
    Some(FdpReport {
        handles: f.handles,
        reclaim_groups: f.reclaim_groups,
        isolation: match f.isolation {
            firmware::ftl::Isolation::Initially => "initially",
            firmware::ftl::Isolation::Persistently => "persistently",
        }
        .into(),
        ru_bytes: f.ru_pages(geo) * geo.page_bytes() as u64,
        per_handle: s
            .handles
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let media = bytes(h.user_units + h.gc_units);
                FdpHandleReport {
                    handle: i as u16,
                    host_bytes: bytes(h.host_units),
                    user_bytes: bytes(h.user_units),
                    gc_bytes: bytes(h.gc_units),
                    media_bytes: media,
                    waf: (h.host_units > 0).then(|| media as f64 / bytes(h.host_units) as f64),
                    reclaim_units: h.reclaim_units,
                }
            })
            .collect(),
        host_bytes: host,
        media_bytes: media,
        erased_bytes: st.blocks_erased * geo.pages as u64 * geo.page_bytes() as u64,
        waf: media as f64 / host.max(1) as f64,
        ruh_updates: s.ruh_updates,
        invalid_pids: s.invalid_pids,
    })
}

/// The architecture's locks, queues and wait list.
fn architecture(totals: &Totals, secs: f64) -> ArchitectureReport {
    let f = &totals.flow;
    ArchitectureReport {
        name: totals.architecture.clone(),
        locks: f
            .locks
            .iter()
            .map(|(class, s)| LockReport {
                class: class.clone(),
                acquisitions: s.acquisitions,
                contended_share: s.contended_share(),
                mean_wait_ns: s.waits.mean(),
                p99_wait_ns: s.waits.quantile(0.99),
                held_ns: s.total_hold.as_nanos(),
            })
            .collect(),
        queues: f
            .queues
            .iter()
            .map(|(name, q)| QueueReport {
                name: name.clone(),
                items: q.items,
                mean_occupancy: q.occupancy_ns as f64 / (secs * 1e9).max(1.0),
                max_occupancy: q.max_occupancy as u64,
                mean_wait_ns: q.total_wait.as_nanos() as f64 / q.items.max(1) as f64,
            })
            .collect(),
        wait_list: f.wait_list.as_ref().map(|h| WaitListReport {
            waited: h.count(),
            mean_ns: h.mean(),
            p99_ns: h.quantile(0.99),
        }),
    }
}

/// Quantiles at which the latency CDF is reported.
const CDF_QUANTILES: [f64; 106] = {
    let mut q = [0.0; 106];
    let mut i = 0;
    while i < 100 {
        q[i] = i as f64 / 100.0;
        i += 1;
    }
    let tail = [0.995, 0.999, 0.9995, 0.9999, 0.99999, 1.0];
    let mut j = 0;
    while j < tail.len() {
        q[100 + j] = tail[j];
        j += 1;
    }
    q
};

fn phase_quantile(hist: &[sim::stats::LogHistogram], q: f64) -> firmware::trace::Phases {
    let mut v = [sim::SimDuration::ZERO; firmware::trace::PHASES];
    for (slot, h) in v.iter_mut().zip(hist) {
        *slot = sim::SimDuration::from_nanos(h.quantile(q));
    }
    firmware::trace::Phases::from_entries(v)
}

/// The controller's DRAM by use under `cfg`, with the pending updates' high-water mark from
/// the FTL's counters.
fn dram(cfg: &firmware::config::DeviceConfig, st: &firmware::ftl::FtlStats) -> DramReport {
    use firmware::ftl::config::MappingConfig;
    let capacity = cfg.controller.dram.bytes();
    let ftl = &cfg.ftl;
    let on_host = cfg.system.kind() == "host-ftl";
    let data_cache = if on_host { 0 } else { ftl.cache.capacity.bytes() };
    let mapping = match &ftl.mapping {
        _ if on_host => 0,
        MappingConfig::Dftl { cmt, .. } => cmt.bytes(),
        MappingConfig::Full => 4 * ftl.logical_units(&cfg.geometry) as u64,
    };
    let entry = firmware::ftl::PENDING_ENTRY_BYTES;
    let pending = st.pending_budget * entry;
    DramReport {
        capacity_bytes: capacity,
        data_cache_bytes: data_cache,
        mapping_bytes: mapping,
        pending_budget_bytes: pending,
        pending_high_bytes: st.pending_high * entry,
        gc_tpage_writes: st.gc_tpage_writes,
        other_bytes: capacity.saturating_sub(data_cache + mapping + pending),
    }
}

/// The report's columns from the host's series.
fn timeseries(s: &host::series::Series) -> TimeSeriesReport {
    let mut r = TimeSeriesReport { interval_ns: s.interval.as_nanos(), ..TimeSeriesReport::default() };
    let (mut prev_end, mut prev) = (s.start, s.start_device);
    for p in &s.points {
        let secs = p.end.saturating_since(prev_end).as_secs_f64().max(1e-12);
        let per_s = |n: u64| n as f64 / secs;
        r.t_ms.push(p.end.saturating_since(s.start).as_secs_f64() * 1e3);
        r.read_iops.push(per_s(p.done[0]));
        r.write_iops.push(per_s(p.done[1]));
        r.iops.push(per_s(p.done.iter().sum()));
        r.mb_per_s.push(p.bytes as f64 / secs / 1e6);
        let some = p.latency.count() > 0;
        r.latency_mean_us.push(some.then(|| p.latency.mean() / 1e3));
        r.latency_p99_us.push(some.then(|| p.latency.quantile(0.99) as f64 / 1e3));
        let host = p.device.host_units.saturating_sub(prev.host_units);
        let flash = p.device.flash_units.saturating_sub(prev.flash_units);
        r.waf.push((host > 0).then(|| flash as f64 / host as f64));
        r.free_blocks.push(p.device.free_blocks);
        r.gc_units_moved.push(p.device.gc_units_moved.saturating_sub(prev.gc_units_moved));
        r.erases.push(p.device.erases.saturating_sub(prev.erases));
        r.power_w.push(&(p.device.energy - prev.energy).per_second(secs));
        if p.device.host_cores > 0 {
            r.host_memory_mib.push(p.device.host_memory as f64 / (1 << 20) as f64);
            let busy = p.device.host_busy_ns.saturating_sub(prev.host_busy_ns) as f64 / 1e9;
            r.host_cpu.push(busy / (secs * p.device.host_cores as f64));
        }
        let (d, q) = (&p.device, &prev);
        r.ecc_reads.push(d.ecc_reads.saturating_sub(q.ecc_reads));
        r.ecc_corrected.push(d.ecc_corrected.saturating_sub(q.ecc_corrected));
        r.ecc_retried.push(d.ecc_retried.saturating_sub(q.ecc_retried));
        r.ecc_uncorrectable.push(d.ecc_uncorrectable.saturating_sub(q.ecc_uncorrectable));
        let checked = d.ecc_bits_checked.saturating_sub(q.ecc_bits_checked);
        let observed = d.ecc_bits_observed.saturating_sub(q.ecc_bits_observed);
        r.rber.push((checked > 0).then(|| observed as f64 / checked as f64));
        r.ecc_busy.push(d.ecc_busy_ns.saturating_sub(q.ecc_busy_ns) as f64 / 1e9 / secs);
        r.pe_mean.push(d.erase_count_sum as f64 / d.good_blocks.max(1) as f64);
        (prev_end, prev) = (p.end, p.device);
    }
    r
}

/// Energy from the series' first sample to its last, and what it means per second and per
/// command.
fn energy(s: &host::series::Series, commands: u64) -> EnergyReport {
    let Some(last) = s.points.last() else { return EnergyReport::default() };
    let joules = last.device.energy - s.start_device.energy;
    let secs = last.end.saturating_since(s.start).as_secs_f64().max(1e-12);
    let mean_w = joules.per_second(secs);
    EnergyReport {
        joules,
        total_j: joules.total(),
        device_j: joules.device(),
        host_j: joules.host(),
        mean_w,
        device_w: mean_w.device(),
        host_w: mean_w.host(),
        joules_per_io: joules.total() / commands.max(1) as f64,
    }
}
