//! The figures of a report: which exist, which are skipped, and how each is framed.

use report::Report;

use crate::figures::{cdf, ecc, fdp, gc, power, timeline, utilisation, wear, zones};
use crate::panel::{self, Area, DrawResult};

/// One figure, ready to draw: its data is taken from the report when it is built.
pub struct Figure {
    name: &'static str,
    title: String,
    subtitle: String,
    size: (u32, u32),
    kind: Kind,
}

enum Kind {
    LatencyCdf(cdf::LatencyCdf),
    Throughput(timeline::Throughput),
    LatencyTime(timeline::LatencyTime),
    Gc(gc::Gc),
    Wear(wear::Wear),
    Utilisation(utilisation::Utilisation),
    Power(power::Power),
    Ecc(ecc::Ecc),
    Zones(zones::Zones),
    Fdp(fdp::Fdp),
}

/// A figure left out for lack of data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The figure's file name, without extension (e.g. `latency_cdf`).
    pub name: &'static str,
    /// Why, e.g. `no operation completed`.
    pub reason: String,
}

impl Figure {
    /// File name without extension, e.g. `latency_cdf`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The title drawn at the top: the device and what the figure shows.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// Width and height in pixels (the PNG's; the SVG's viewport).
    pub fn size(&self) -> (u32, u32) {
        self.size
    }

    /// Draws the whole figure on `root`, which must be [`Figure::size`] pixels.
    pub(crate) fn draw<DB: plotters::prelude::DrawingBackend>(&self, root: &Area<DB>) -> DrawResult<(), DB> {
        let body = panel::frame(root, &self.title, &self.subtitle)?;
        match &self.kind {
            Kind::LatencyCdf(f) => f.draw(&body),
            Kind::Throughput(f) => f.draw(&body),
            Kind::LatencyTime(f) => f.draw(&body),
            Kind::Gc(f) => f.draw(&body),
            Kind::Wear(f) => f.draw(&body),
            Kind::Utilisation(f) => f.draw(&body),
            Kind::Power(f) => f.draw(&body),
            Kind::Ecc(f) => f.draw(&body),
            Kind::Zones(f) => f.draw(&body),
            Kind::Fdp(f) => f.draw(&body),
        }
    }
}

/// The figures `report` has data for, in order, and those skipped.
pub fn figures(report: &Report) -> (Vec<Figure>, Vec<Skipped>) {
    let subtitle = run_line(report);
    let device = report.device.name.as_str();
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut add = |name: &'static str, what: &str, height: u32, kind: Result<Kind, String>| match kind {
        Ok(kind) => out.push(Figure {
            name,
            title: format!("{device}: {what}"),
            subtitle: subtitle.clone(),
            size: (1200, panel::TITLE_HEIGHT + height),
            kind,
        }),
        Err(reason) => skipped.push(Skipped { name, reason }),
    };
    add("latency_cdf", "latency CDF per operation", 620, cdf::build(report).map(Kind::LatencyCdf));
    add("throughput", "throughput over time", 760, timeline::throughput(report).map(Kind::Throughput));
    add("latency_time", "latency over time", 480, timeline::latency(report).map(Kind::LatencyTime));
    let g = gc::build(report);
    let height = g.as_ref().map_or(0, |g| g.height());
    add("gc", "write amplification, free blocks and GC over time", height, g.map(Kind::Gc));
    add("wear", "erase-count histogram", 480, wear::build(report).map(Kind::Wear));
    let u = utilisation::build(report);
    let height = u.as_ref().map_or(0, |u| u.height());
    add("utilisation", "busy time per channel, die and core", height, u.map(Kind::Utilisation));
    let p = power::build(report);
    let height = p.as_ref().map_or(0, |p| p.height());
    add("power", "power over time by component", height, p.map(Kind::Power));
    if let Some(e) = ecc::build(report) {
        let height = e.as_ref().map_or(0, |e| e.height());
        add("ecc", "bit errors, retries and wear over time", height, e.map(Kind::Ecc));
    }
    if let Some(z) = zones::build(report) {
        let height = z.as_ref().map_or(0, |z| z.height());
        add("zones", "zones by state, resets and latency", height, z.map(Kind::Zones));
    }
    if let Some(f) = fdp::build(report) {
        let height = f.as_ref().map_or(0, |f| f.height());
        add("fdp", "bytes and write amplification per reclaim unit handle", height, f.map(Kind::Fdp));
    }
    (out, skipped)
}

/// The line under every title: the workload, the starting state and the seed.
fn run_line(r: &Report) -> String {
    let jobs: Vec<String> = r
        .workload
        .iter()
        .map(|j| {
            let clones = if j.numjobs > 1 { format!(" x{}", j.numjobs) } else { String::new() };
            format!("{} {} QD{}{clones}", j.name, format!("{:?}", j.rw).to_lowercase(), j.iodepth)
        })
        .collect();
    let jobs = if jobs.is_empty() { "no jobs".to_string() } else { jobs.join(", ") };
    format!("{jobs} | started {} | seed {} | ssdlab {}", r.initial_state, r.seed, r.ssdlab_version)
}
