//! `nicfs figure`: the NICFS paper's figures regenerated in virtual time (the `nicfs-timed`
//! model), each value beside the published one.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use nicfs_timed::TimedConfig;
use nicfs_timed::figures::{
    FrontEndMap, MAP_PIPELINE_SPEED, MAP_SPEED_SWITCH_NS, PipelineMap, Row, Scale, backend, front_end_map,
    paper, pipeline_map, render, render_throughput, throughput, throughput_rows,
};

/// Arguments of `nicfs figure`.
#[derive(Args, Debug)]
pub struct FigureArgs {
    #[command(subcommand)]
    which: Which,
    /// A TOML model configuration (see `TimedConfig`; every field has a cited default).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Seed of the workloads' random offsets.
    #[arg(long, global = true, default_value_t = 1)]
    seed: u64,
    /// A small scale (seconds instead of minutes; the shapes, not the numbers).
    #[arg(long, global = true)]
    small: bool,
}

#[derive(Subcommand, Debug)]
enum Which {
    /// Every figure: throughput against the kernel baselines, back end against front end,
    /// one/two/four front ends, without the index-block cache, without the pipeline.
    Paper,
    /// Figure 1 only (throughput by size against the baselines).
    Throughput,
    /// Figures 2-5 only (the back end).
    Backend,
    /// Where figure 3's shapes hold (two front ends x2, four below two): the ratios against the
    /// NIC's context-switch cost (0-30 us) and its core speed (1-4 NIC cycles per host cycle),
    /// neither stated by the paper (nicfs/BENCHMARKS.md has the measured map).
    Map {
        /// Also draw the map's two charts here (front-ends-by-switch.png,
        /// front-ends-by-speed.png).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Prints the model's configuration (defaults, or --config) as TOML.
    Config,
    /// Measures this implementation's CPU costs on this machine (wall clock; not
    /// deterministic) and prints them as the model's `[cpu]` section.
    Calibrate,
}

/// Runs `nicfs figure`.
pub fn run(a: FigureArgs) -> Result<()> {
    let cfg: TimedConfig = match &a.config {
        Some(p) => toml::from_str(&std::fs::read_to_string(p)?)
            .with_context(|| format!("parsing {}", p.display()))?,
        None => TimedConfig::default(),
    };
    cfg.validate()?;
    let scale = if a.small { Scale::small() } else { Scale::paper() };
    let e = |x: String| anyhow!(x);
    let rows: Vec<Row> = match a.which {
        Which::Paper => {
            let (t, rows) = paper(&cfg, &scale, a.seed).map_err(e)?;
            println!("## Figure 1: throughput\n\n{}", render_throughput(&t));
            rows
        }
        Which::Throughput => {
            let t = throughput(&cfg, &scale, a.seed).map_err(e)?;
            println!("## Figure 1: throughput\n\n{}", render_throughput(&t));
            throughput_rows(&t)
        }
        Which::Backend => backend(&cfg, &scale, a.seed).map_err(e)?,
        Which::Map { out } => {
            let map = front_end_map(&cfg, &scale, a.seed).map_err(e)?;
            print!("{}", map.render());
            let pipe = pipeline_map(&cfg, &scale, a.seed).map_err(e)?;
            print!("\n{}", pipe.render());
            if let Some(dir) = out {
                std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
                let mut charts = map_charts(&map);
                charts.push(("pipeline-by-patch.png", pipeline_chart(&pipe)));
                for (name, chart) in charts {
                    let path = dir.join(name);
                    plot::write_chart(&chart, &path)
                        .with_context(|| format!("drawing {}", path.display()))?;
                    eprintln!("wrote {}", path.display());
                }
            }
            return Ok(());
        }
        Which::Config => {
            print!("{}", toml::to_string(&cfg)?);
            return Ok(());
        }
        Which::Calibrate => {
            let cpu = nicfs_timed::calibrate::measure(cfg.host.clock_mhz).map_err(|e| anyhow!(e))?;
            println!("# measured at a host clock of {} MHz", cfg.host.clock_mhz);
            print!("[cpu]\n{}", toml::to_string(&cpu)?);
            return Ok(());
        }
    };
    println!("## Against the published values\n\n{}", render(&rows));
    let off = rows.iter().filter(|r| !r.same_direction).count();
    println!("\n{} rows, {off} not in the published direction (see nicfs/BENCHMARKS.md for why)", rows.len());
    if rows.is_empty() {
        bail!("no figure rows");
    }
    Ok(())
}

/// The front-end map's charts: four front ends over one by switch cost, and both ratios by NIC
/// speed, each with the published value as a flat line.
fn map_charts(m: &FrontEndMap) -> Vec<(&'static str, plot::Chart)> {
    let point = |x: f64, y: f64| plot::Point { x, mean: y, lo: y, hi: y };
    let flat = |name: &str, y: f64, lo: f64, hi: f64| plot::Series {
        name: name.into(),
        points: vec![point(lo, y), point(hi, y)],
    };
    let switch_us: Vec<f64> = m.by_switch.iter().map(|(ns, _)| *ns as f64 / 1e3).collect();
    let (lo, hi) = (switch_us[0], switch_us[switch_us.len() - 1]);
    let by_switch = plot::Chart {
        title: "NICFS figure 3: four front ends over one, by the NIC's context-switch cost".into(),
        subtitle: format!(
            "sustained 4 KiB appends; NIC speed {} cycles per host cycle; published: four below two front ends",
            m.speed
        ),
        x_desc: "context switch, us (nic.switch_ns; the paper states none)".into(),
        y_desc: "throughput over one front end".into(),
        categories: None,
        series: vec![
            plot::Series {
                name: "4 front ends / 1".into(),
                points: m.by_switch.iter().map(|(ns, r)| point(*ns as f64 / 1e3, *r)).collect(),
            },
            flat("2 front ends / 1 (the published x2 is its level)", m.two, lo, hi),
        ],
        log_y: false,
    };
    let speeds: Vec<f64> = m.by_speed.iter().map(|s| s.0).collect();
    let (lo, hi) = (speeds[0], speeds[speeds.len() - 1]);
    let mut series = vec![plot::Series {
        name: "2 front ends / 1".into(),
        points: m.by_speed.iter().map(|(s, two, _)| point(*s, *two)).collect(),
    }];
    for (k, ns) in MAP_SPEED_SWITCH_NS.iter().enumerate() {
        series.push(plot::Series {
            name: format!("4 / 1, switch {} us", *ns as f64 / 1e3),
            points: m.by_speed.iter().map(|(s, _, four)| point(*s, four[k])).collect(),
        });
    }
    series.push(flat("published: two front ends x2", 2.0, lo, hi));
    let by_speed = plot::Chart {
        title: "NICFS figure 3: front ends over one, by the NIC core's speed".into(),
        subtitle: "sustained 4 KiB appends; published: two front ends x2, four below two".into(),
        x_desc: "NIC cycles per host cycle (nic.cycles_per_host_cycle; the paper states none)".into(),
        y_desc: "throughput over one front end".into(),
        categories: None,
        series,
        log_y: false,
    };
    vec![("front-ends-by-switch.png", by_switch), ("front-ends-by-speed.png", by_speed)]
}

/// The pipeline map's chart: without the pipeline over with, by Patch's cost per record, a
/// line per NIC speed, with the published bound as a flat line.
fn pipeline_chart(m: &PipelineMap) -> plot::Chart {
    let point = |x: f64, y: f64| plot::Point { x, mean: y, lo: y, hi: y };
    let patches: Vec<f64> = m.by_patch.iter().map(|(p, _)| *p as f64).collect();
    let (lo, hi) =
        (patches.iter().copied().fold(f64::INFINITY, f64::min), patches.iter().copied().fold(0.0, f64::max));
    let mut series: Vec<plot::Series> = MAP_PIPELINE_SPEED
        .iter()
        .enumerate()
        .map(|(k, speed)| plot::Series {
            name: format!("NIC speed {speed:.1}"),
            points: m.by_patch.iter().map(|(p, r)| point(*p as f64, r[k])).collect(),
        })
        .collect();
    series.push(plot::Series {
        name: "published: <= 0.5".into(),
        points: vec![point(lo, 0.5), point(hi, 0.5)],
    });
    plot::Chart {
        title: "NICFS figure 5: back-end drain without the pipeline over with".into(),
        subtitle: format!(
            "4 KiB appends; the other three stages {} cycles per record; published: at most half",
            m.others
        ),
        x_desc: "Patch cycles per record (cpu.patch_record; calibrated 1650, the paper states none)".into(),
        y_desc: "without / with the pipeline".into(),
        categories: None,
        series,
        log_y: false,
    }
}
