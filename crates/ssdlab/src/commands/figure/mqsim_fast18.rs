//! `ssdlab figure mqsim-fast18`: the multi-flow interference experiments of MQSim's FAST'18
//! paper (its repository's `fast18/` folder: backend contention, data-cache contention, queue
//! fetch size 16 and 1024), flow 2's intensity swept as the configurations do, on a device
//! built from the `mqsim-default` preset as each `ssdconfig` sets it. Each point runs the two
//! flows together (each on its own queue), then each by itself from the same starting state
//! with the same stream, and prints each flow's slowdown (mean latency shared / alone) and the
//! fairness index (least slowdown / greatest), MQSim's definitions. docs/mqsim-fast18.md puts
//! them beside MQSim's own numbers.
//!
//! What is copied from MQSim's files (CMU-SAFARI/MQSim, `fast18/*/ssdconfig-*.xml` and
//! `workload-*.xml`; parameters only, no code):
//! - every `ssdconfig`: the `mqsim-default` geometry and timing (the same values as its
//!   default `ssdconfig.xml`), `Ideal_Mapping_Table` true (the whole map in DRAM: `Full`),
//!   `Queue_Fetch_Size` 512 (16 and 1024 in the fetch-size pair);
//! - every flow: `Device_Level_Data_Caching_Mode` WRITE_CACHE (reads do not fill the cache),
//!   the `QUEUE_DEPTH` generator (fio's closed loop at `iodepth`), 8-sector (4 KiB) requests
//!   aligned to 16 sectors (8 KiB), each flow in its own share of the logical space (MQSim
//!   splits the space evenly between the flows) and over `Working_Set_Percentage` of it;
//! - backend contention and fetch size: both flows uniform random reads on `Chip_IDs` 0,1 of
//!   every channel (so the device they see has 2 ways); flow 1 at depth 2 (backend) or 8
//!   (fetch size), flow 2 at 2 (8) to 256;
//! - data-cache contention: uniform hot/cold random writes (`RANDOM_HOTCOLD`: 100-h% of the
//!   writes to h% of the working set, fio's `zoned`), flow 1 at depth 8 over 1% with h = 1,
//!   flow 2 at depth 8 to 256, over 1% then 100% with h = 1 then 50, as its six scenarios;
//!   flow 1 on channels 0-3 and flow 2 on 4-7 (`Channel_IDs`, job option `channels`);
//! - data-cache partitioned: the same with the data cache split equally between the two flows
//!   (`Data_Cache_Sharing_Mode` EQUAL_PARTITIONING, `ftl.cache.partition = "equal"`); each
//!   flow alone has the whole cache. The CMT is not in play (`Ideal_Mapping_Table`).
//!
//! What differs: MQSim's
//! `Initial_Occupancy_Percentage` is replaced by a full sequential fill before the read
//! experiments (reads must find data), and its `Stop_Time` by `--runtime`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use firmware::config::DeviceConfig;
use firmware::ftl::config::MappingConfig;
use firmware::ftl::{Partition, PartitionMode, Precondition};
use firmware::snapshot::Snapshot;
use host::run::RunOptions;
use host::workload::JobSpec;
use report::Report;
use serde::Serialize;
use sim::SimDuration;
use ssdlab::{Rig, Start};

use super::FigureOpts;
use super::lab::Lab;
use crate::cli::MqsimFast18Args;

/// One of the experiments: its flows and its device.
struct Experiment {
    /// Short name (and the folder of MQSim's results under `--mqsim`).
    key: &'static str,
    /// What it shows.
    title: &'static str,
    /// MQSim's workload files' stem (`workload-STEM-flow-1.xml` ...).
    stem: &'static str,
    /// Writes (data-cache contention) or reads.
    write: bool,
    /// Flow 1's queue depth.
    flow1_depth: u32,
    /// Flow 1's working set (% of its share) and hot region (%; 0: uniform).
    flow1_ws: (f64, u32),
    /// Flow 2 per scenario: queue depth, working set %, hot region %.
    flow2: Vec<(u32, f64, u32)>,
    /// `Queue_Fetch_Size`.
    fetch: u32,
    /// Ways the flows use (`Chip_IDs`).
    ways: u32,
    /// Each flow's channels (`Channel_IDs`; `None`: all).
    channels: [Option<&'static str>; 2],
    /// The data cache split equally between the flows (`Data_Cache_Sharing_Mode`).
    partitioned: bool,
}

fn experiments() -> Vec<Experiment> {
    let depths = |from: u32| -> Vec<u32> { (0..).map(|i| from << i).take_while(|&d| d <= 256).collect() };
    let reads = |d: Vec<u32>| d.into_iter().map(|d| (d, 50.0, 0)).collect::<Vec<_>>();
    let fetch = |key, title, fetch| Experiment {
        key,
        title,
        stem: "queue-fetch-size",
        write: false,
        flow1_depth: 8,
        flow1_ws: (50.0, 0),
        flow2: reads(depths(8)),
        fetch,
        ways: 2,
        channels: [None; 2],
        partitioned: false,
    };
    let cache = |key, title, partitioned| Experiment {
        key,
        title,
        stem: "datacache-contention",
        write: true,
        flow1_depth: 8,
        flow1_ws: (1.0, 1),
        flow2: vec![
            (8, 1.0, 1),
            (16, 1.0, 1),
            (32, 100.0, 50),
            (64, 100.0, 50),
            (128, 100.0, 50),
            (256, 100.0, 50),
        ],
        fetch: 512,
        ways: 4,
        channels: [Some("0-3"), Some("4-7")],
        partitioned,
    };
    vec![
        Experiment {
            key: "backend-contention",
            title: "back-end contention: random 4 KiB reads, flow 1 at QD2",
            stem: "backend-contention",
            write: false,
            flow1_depth: 2,
            flow1_ws: (50.0, 0),
            flow2: reads(depths(2)),
            fetch: 512,
            ways: 2,
            channels: [None; 2],
            partitioned: false,
        },
        fetch("qfs-16", "queue fetch size 16: random 4 KiB reads, flow 1 at QD8", 16),
        fetch("qfs-1024", "queue fetch size 1024: random 4 KiB reads, flow 1 at QD8", 1024),
        cache(
            "data-cache-contention",
            "data-cache contention: hot/cold random 4 KiB writes, flow 1 at QD8 over 1%, shared cache",
            false,
        ),
        cache(
            "data-cache-partitioned",
            "data-cache contention, the cache split equally between the flows",
            true,
        ),
    ]
}

/// The device of `e`: `mqsim-default` with the flows' ways, the whole map in DRAM, no read
/// fill of the cache, the queue fetch size, and workers enough that only the fetch size
/// bounds a queue's commands inside (MQSim has no per-queue worker pool).
fn device(lab: &Lab, e: &Experiment, blocks: u32) -> Result<DeviceConfig> {
    let mut cfg = lab.device("mqsim-default", blocks, |c| {
        c.geometry.ways = e.ways;
        c.ftl.mapping = MappingConfig::Full;
        c.ftl.cache.read_allocate = false;
        c.host.queue_fetch_size = Some(e.fetch);
        c.host.workers_per_queue = 256;
        if e.partitioned {
            c.ftl.cache.partition = Partition::Mode(PartitionMode::Equal);
        }
    })?;
    if !lab.opts.quick {
        crate::named_device::set_blocks(&mut cfg, blocks)?;
    }
    cfg.name = format!("mqsim-fast18-{}", e.key);
    cfg.validate().map_err(|err| anyhow::anyhow!("{}: {err}", e.key))?;
    Ok(cfg)
}

/// A flow as an fio job: `share` of `shares` of the logical space, over `ws` % of it, `hot` %
/// of it taking 100-hot % of the requests (0: uniform), on `channels` (`None`: all).
#[allow(clippy::too_many_arguments)]
fn flow(
    name: &str,
    write: bool,
    depth: u32,
    (ws, hot): (f64, u32),
    (share, shares): (u64, u64),
    capacity: u64,
    runtime: &str,
    seed: u64,
    channels: Option<&str>,
) -> JobSpec {
    const ALIGN: u64 = 8192; // Address_Alignment_Unit: 16 sectors
    let region = capacity / shares / ALIGN * ALIGN;
    let size = ((region as f64 * ws / 100.0) as u64 / ALIGN * ALIGN).max(ALIGN);
    let mut j = JobSpec::new(name);
    let mut set = |k: &str, v: &str| j.set(k, Some(v)).unwrap_or_else(|err| panic!("{k}={v}: {err}"));
    set("rw", if write { "randwrite" } else { "randread" });
    set("bs", "4k");
    set("blockalign", "8k");
    set("iodepth", &depth.to_string());
    set("offset", &(region * share).to_string());
    set("size", &size.to_string());
    set("time_based", "1");
    set("runtime", runtime);
    set("randseed", &seed.to_string());
    if let Some(c) = channels {
        set("channels", c);
    }
    if hot > 0 && hot < 50 {
        set("random_distribution", &format!("zoned:{}/{hot}:{hot}/{}", 100 - hot, 100 - hot));
    }
    j
}

/// One flow's figures at one point.
#[derive(Clone, Debug, Serialize)]
struct FlowPoint {
    depth: u32,
    iops: f64,
    shared_us: f64,
    alone_us: f64,
    slowdown: f64,
    /// Mean time per phase in the shared run, us (queue wait, worker wait, cache, FIL wait,
    /// flash command, channel transfer): where the slowdown comes from.
    phases_us: Vec<(String, f64)>,
    /// MQSim's mean response times (shared, alone), us, with `--mqsim`.
    mqsim_us: Option<(f64, f64)>,
}

/// One point of an experiment.
#[derive(Clone, Debug, Serialize)]
struct PointOut {
    experiment: &'static str,
    scenario: usize,
    flows: [FlowPoint; 2],
    fairness: f64,
    mqsim_fairness: Option<f64>,
}

fn mean_us(r: &Report, flow: usize) -> f64 {
    r.flows.get(flow).and_then(|f| report::mean_latency_ns(&f.ops)).unwrap_or(f64::NAN) / 1e3
}

fn phases_us(r: &Report, flow: usize) -> Vec<(String, f64)> {
    let Some(f) = r.flows.get(flow) else { return Vec::new() };
    let n: u64 = f.ops.values().map(|o| o.throughput.count).sum();
    let keep = ["queue_wait", "worker_wait", "cache", "fil_wait", "command", "transfer"];
    keep.iter()
        .map(|k| {
            let total: f64 = f
                .ops
                .values()
                .map(|o| {
                    let v = o
                        .phases_ns
                        .entries()
                        .iter()
                        .find(|(name, _)| name == k)
                        .map_or(0, |p| p.1.as_nanos());
                    v as f64 * o.throughput.count as f64
                })
                .sum();
            (k.to_string(), total / n.max(1) as f64 / 1e3)
        })
        .collect()
}

/// MQSim's mean device response times, us, of the flows in one result file, in order.
fn mqsim_times(path: &Path) -> Option<Vec<f64>> {
    let text = std::fs::read_to_string(path).ok()?;
    let tag = "<Device_Response_Time>";
    let v: Vec<f64> = text
        .match_indices(tag)
        .filter_map(|(i, _)| {
            let rest = &text[i + tag.len()..];
            rest[..rest.find('<')?].trim().parse().ok()
        })
        .collect();
    (!v.is_empty()).then_some(v)
}

/// MQSim's (shared, alone) response times of both flows at `scenario` (1-based), from the
/// layout `scripts/mqsim-fast18` leaves: `DIR/KEY/workload-STEM-{flow-1,flow-2,flow-1-flow-2}_scenario_N.xml`.
fn mqsim_point(dir: &Path, e: &Experiment, scenario: usize) -> Option<[(f64, f64); 2]> {
    let file = |w: &str| dir.join(e.key).join(format!("workload-{}-{w}_scenario_{scenario}.xml", e.stem));
    let shared = mqsim_times(&file("flow-1-flow-2"))?;
    let a1 = mqsim_times(&file("flow-1"))?;
    let a2 = mqsim_times(&file("flow-2"))?;
    Some([(*shared.first()?, *a1.first()?), (*shared.get(1)?, *a2.first()?)])
}

/// A device image in its starting state, saved once per experiment.
struct Start0 {
    path: Option<PathBuf>,
    _dir: tempfile::TempDir,
}

impl Start0 {
    fn new(cfg: &DeviceConfig, seed: u64, fill: bool) -> Result<Start0> {
        let dir = tempfile::tempdir().context("a temporary directory for the filled device")?;
        if !fill {
            return Ok(Start0 { path: None, _dir: dir });
        }
        let kind = Precondition::SeqFill;
        let t = Instant::now();
        let p = ssdlab::prepare(
            cfg,
            &firmware::platform::StoreChoice::Metadata,
            seed,
            Start::Precondition(kind),
            &mut |_, _| {},
        )
        .with_context(|| format!("filling {}", cfg.name))?;
        let path = dir.path().join("filled.state");
        Snapshot::save(&p.device, &path, &ssdlab::describe(kind), seed)?;
        eprintln!("mqsim-fast18: {} filled ({:.1}s)", cfg.name, t.elapsed().as_secs_f64());
        Ok(Start0 { path: Some(path), _dir: dir })
    }

    fn rig(&self, lab: &Lab, cfg: &DeviceConfig) -> Result<Rig> {
        let start = match &self.path {
            Some(p) => Start::Snapshot { snapshot: Box::new(Snapshot::load(p)?), label: "filled".into() },
            None => Start::Fresh,
        };
        lab.rig(cfg, start)
    }
}

pub fn run(a: &MqsimFast18Args) -> Result<()> {
    let runtime_ms = if a.quick { 10 } else { a.runtime_ms };
    ensure!(runtime_ms >= 1, "--runtime-ms must be at least 1");
    let opts = FigureOpts { out: a.out.clone(), quick: a.quick, seed: a.seed };
    let mut lab = Lab::new("mqsim-fast18", &opts)?;
    let blocks = if a.quick { 256 } else { a.blocks };
    let runtime = format!("{runtime_ms}ms");
    let run_opts =
        RunOptions { interval: SimDuration::from_millis(runtime_ms.div_ceil(20)), ..RunOptions::default() };
    let seeds = [host::workload::job_seed(a.seed, 0), host::workload::job_seed(a.seed, 1)];
    let mut exps = experiments();
    if let Some(only) = &a.experiment {
        exps.retain(|e| e.key == only);
        ensure!(
            !exps.is_empty(),
            "no experiment {only} (backend-contention, qfs-16, qfs-1024, data-cache-contention, data-cache-partitioned)"
        );
    }
    let total: usize = exps.iter().map(|e| if a.quick { 2 } else { e.flow2.len() }).sum();
    let mut done = 0usize;
    let mut points = Vec::new();
    for e in &exps {
        let cfg = device(&lab, e, blocks)?;
        let start0 = Start0::new(&cfg, a.seed, !e.write)?;
        let capacity = {
            let rig = start0.rig(&lab, &cfg)?;
            let f = rig.system().front();
            f.capacity_lbas() * u64::from(f.lba_bytes())
        };
        let f1 = |shares| {
            let c = e.channels[0];
            flow("flow-1", e.write, e.flow1_depth, e.flow1_ws, (0, shares), capacity, &runtime, seeds[0], c)
        };
        let f2 = |i: usize, share, shares| {
            let (d, ws, hot) = e.flow2[i];
            flow(
                "flow-2",
                e.write,
                d,
                (ws, hot),
                (share, shares),
                capacity,
                &runtime,
                seeds[1],
                e.channels[1],
            )
        };
        // Flow 1 alone is the same run at every point.
        let alone1 =
            lab.run(&format!("{}: flow 1 alone", e.key), &start0.rig(&lab, &cfg)?, &[f1(2)], &run_opts)?;
        let alone1_us = mean_us(&alone1, 0);
        let scenarios: Vec<usize> =
            if a.quick { vec![0, e.flow2.len() - 1] } else { (0..e.flow2.len()).collect() };
        for i in scenarios {
            done += 1;
            let depth = e.flow2[i].0;
            let tag = format!("[{done}/{total}] {}: flow 2 at QD{depth}", e.key);
            let mut shared = lab.run(
                &format!("{tag}, both flows"),
                &start0.rig(&lab, &cfg)?,
                &[f1(2), f2(i, 1, 2)],
                &run_opts,
            )?;
            let alone2 =
                lab.run(&format!("{tag}, alone"), &start0.rig(&lab, &cfg)?, &[f2(i, 1, 2)], &run_opts)?;
            let alone = [alone1_us, mean_us(&alone2, 0)];
            for (j, us) in alone.iter().enumerate() {
                report::set_alone(&mut shared, j, Some(us * 1e3));
            }
            let mq = a.mqsim.as_deref().and_then(|d| mqsim_point(d, e, i + 1));
            let fp = |j: usize, depth: u32| FlowPoint {
                depth,
                iops: shared.flows[j].total.iops,
                shared_us: mean_us(&shared, j),
                alone_us: alone[j],
                slowdown: shared.flows[j].slowdown.unwrap_or(f64::NAN),
                phases_us: phases_us(&shared, j),
                mqsim_us: mq.map(|m| m[j]),
            };
            let p = PointOut {
                experiment: e.key,
                scenario: i + 1,
                flows: [fp(0, e.flow1_depth), fp(1, depth)],
                fairness: shared.fairness.unwrap_or(f64::NAN),
                mqsim_fairness: mq.map(|m| {
                    let s = [m[0].0 / m[0].1, m[1].0 / m[1].1];
                    s[0].min(s[1]) / s[0].max(s[1])
                }),
            };
            lab.save(&format!("{}-scenario-{}", e.key, i + 1), &shared, false)?;
            let mqsim = mq.map_or_else(String::new, |m| {
                let s = [m[0].0 / m[0].1, m[1].0 / m[1].1];
                format!("{:.2} / {:.2}, F {:.2}", s[0], s[1], s[0].min(s[1]) / s[0].max(s[1]))
            });
            lab.row(
                e.key,
                &format!("scenario {}: flow 2 at QD{depth}", i + 1),
                format!("{:.2} / {:.2}, F {:.2}", p.flows[0].slowdown, p.flows[1].slowdown, p.fairness),
                &mqsim,
                format!(
                    "mean us shared/alone: flow 1 {:.0}/{:.0}, flow 2 {:.0}/{:.0}; flow 1 waits {}",
                    p.flows[0].shared_us,
                    p.flows[0].alone_us,
                    p.flows[1].shared_us,
                    p.flows[1].alone_us,
                    top_wait(&p.flows[0])
                ),
            );
            points.push(p);
        }
    }
    if let Some(dir) = &a.out {
        super::super::write_json(&dir.join("points.json"), &points)?;
        let mut csv = String::from(
            "experiment,scenario,flow2_depth,slowdown1,slowdown2,fairness,mqsim_slowdown1,mqsim_slowdown2,mqsim_fairness\n",
        );
        for p in &points {
            let mq = |j: usize| p.flows[j].mqsim_us.map_or(String::new(), |(s, a)| format!("{:.4}", s / a));
            let _ = writeln!(
                csv,
                "{},{},{},{:.4},{:.4},{:.4},{},{},{}",
                p.experiment,
                p.scenario,
                p.flows[1].depth,
                p.flows[0].slowdown,
                p.flows[1].slowdown,
                p.fairness,
                mq(0),
                mq(1),
                p.mqsim_fairness.map_or(String::new(), |f| format!("{f:.4}"))
            );
        }
        std::fs::write(dir.join("points.csv"), csv).context("writing points.csv")?;
        for e in &exps {
            let of: Vec<&PointOut> = points.iter().filter(|p| p.experiment == e.key).collect();
            for ext in ["png", "svg"] {
                plot::write_chart(&chart(e, &of), &dir.join(format!("{}.{ext}", e.key)))?;
            }
        }
    }
    lab.finish()
}

/// The phase flow 1 waits in most, beyond its alone run's share.
fn top_wait(f: &FlowPoint) -> String {
    f.phases_us
        .iter()
        .filter(|(k, _)| k != "command" && k != "transfer")
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or_else(String::new, |(k, v)| format!("most in {k} ({v:.0} us)"))
}

fn chart(e: &Experiment, points: &[&PointOut]) -> plot::Chart {
    let pt = |i: usize, v: f64| plot::Point { x: i as f64, mean: v, lo: v, hi: v };
    let mut series = vec![
        plot::Series {
            name: "flow 1 slowdown".into(),
            points: points.iter().enumerate().map(|(i, p)| pt(i, p.flows[0].slowdown)).collect(),
        },
        plot::Series {
            name: "flow 2 slowdown".into(),
            points: points.iter().enumerate().map(|(i, p)| pt(i, p.flows[1].slowdown)).collect(),
        },
        plot::Series {
            name: "fairness".into(),
            points: points.iter().enumerate().map(|(i, p)| pt(i, p.fairness)).collect(),
        },
    ];
    if points.iter().all(|p| p.mqsim_fairness.is_some()) {
        series.push(plot::Series {
            name: "MQSim flow 1 slowdown".into(),
            points: points
                .iter()
                .enumerate()
                .map(|(i, p)| pt(i, p.flows[0].mqsim_us.map_or(f64::NAN, |(s, a)| s / a)))
                .collect(),
        });
        series.push(plot::Series {
            name: "MQSim fairness".into(),
            points: points
                .iter()
                .enumerate()
                .map(|(i, p)| pt(i, p.mqsim_fairness.unwrap_or(f64::NAN)))
                .collect(),
        });
    }
    plot::Chart {
        title: format!("MQSim FAST'18, {}", e.key),
        subtitle: e.title.into(),
        x_desc: "flow 2 queue depth".into(),
        y_desc: "slowdown (shared / alone mean latency); fairness (min / max slowdown)".into(),
        categories: Some(points.iter().map(|p| p.flows[1].depth.to_string()).collect()),
        series,
        log_y: false,
    }
}
