//! The volumes of a multi-volume trace (SPC ASUs, MSR disks, MQSim devices, blkparse devices,
//! iolog files): where each lands on the device (its layout) and, when they are kept apart,
//! which flow, queue pair, placement identifier and queue priority class each has.
//!
//! ```text
//!   scan (footprint per volume) ──> layout: offsets (folded unless told) | footprint regions
//!                                   flows:  one | a flow per volume (named ones, the rest
//!                                           their own flows, grouped or dropped)
//!                                   queues: flow f -> queue f mod Q + 1 (shared beyond Q)
//! ```

use std::collections::BTreeMap;

use firmware::hil::Priority;
use serde::{Deserialize, Serialize};

use super::scan::VolumeScan;

/// Regions of the footprint layout start and end on this boundary (or the mapping unit, if
/// larger).
pub const REGION_ALIGN: u64 = 1 << 20;

/// How the volumes of a trace share the device's addresses.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Base offsets from `volume_offsets` and `volume_stride` (by default every volume at 0:
    /// volumes fold onto the same addresses, which a warning says); addresses fold into the
    /// logical capacity.
    #[default]
    Offsets,
    /// Each volume its own region, sized by its footprint (its largest end offset), aligned to
    /// [`REGION_ALIGN`] and packed in volume order from 0. Regions that do not fit are an
    /// error, unless `fit`: then every region is scaled down by the same factor (addresses
    /// past a scaled region fold into it).
    Footprint {
        /// Scale the regions down to fit the device.
        fit: bool,
    },
}

/// What becomes of the volumes not named in [`VolumeFlows::volumes`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Others {
    /// Each a flow of its own.
    #[default]
    Flows,
    /// All together one flow, `others`.
    Group,
    /// Not replayed (their records are read and counted as `dropped`).
    Drop,
}

/// What one volume asks for.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumeSettings {
    /// Its writes carry this FDP placement identifier.
    pub pid: Option<u16>,
    /// Its queue's arbitration class (weighted round robin).
    pub priority: Option<Priority>,
}

/// A trace's volumes as flows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VolumeFlows {
    /// Volumes named (each a flow of its own), with their settings.
    pub volumes: BTreeMap<u32, VolumeSettings>,
    /// The volumes not named.
    pub others: Others,
}

/// Where one volume went, in the report (`replay.layout.volumes`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VolumeLayout {
    /// The volume's number.
    pub volume: u32,
    /// Its requests in the trace.
    pub requests: u64,
    /// Its footprint: the largest end offset of its requests, bytes.
    pub footprint: u64,
    /// Where its address 0 lands on the device, bytes.
    pub base: u64,
    /// The device bytes its addresses fold into: its region (footprint layout), or from its
    /// base to the end of the device (offsets layout).
    pub size: u64,
    /// Its flow's name (`null`: dropped).
    pub flow: Option<String>,
    /// Its flow's submission queue (`null`: one flow over all queues, or dropped).
    pub queue: Option<u16>,
    /// The placement identifier its writes carry, if any.
    pub pid: Option<u16>,
    /// Its queue's priority class, if set.
    pub priority: Option<Priority>,
}

/// How a replay laid the trace's volumes out (`replay.layout`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LayoutReport {
    /// `offsets` (base offsets, folding into the capacity) or `footprint` (regions).
    pub kind: String,
    /// Footprint layout: the factor the regions were scaled by to fit (1 = not scaled).
    pub scale: f64,
    /// Volumes whose addresses overlap another volume's on the device (offsets layout).
    pub folded_volumes: u32,
    /// Flows the volumes make (1 when the trace is one flow).
    pub flows: u32,
    /// Queue pairs they use.
    pub queues: u32,
    /// Per volume, in volume order.
    pub volumes: Vec<VolumeLayout>,
}

/// One flow of a replay.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowPlan {
    /// Its name (`vol N`, `others`, or the trace's file name).
    pub name: String,
    /// Its queue (`None`: every queue, round robin, as a one-flow replay does).
    pub queue: Option<u16>,
    /// Its queue's class.
    pub priority: Option<Priority>,
}

/// The plan of a replay: the address map's regions and offsets, and the flows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Regions for the address map (footprint layout).
    pub regions: BTreeMap<u32, (u64, u64)>,
    /// The flows.
    pub flows: Vec<FlowPlan>,
    /// Per volume: its flow (`None`: dropped) and its placement identifier.
    pub route: BTreeMap<u32, (Option<u32>, Option<u16>)>,
    /// Queue pairs used.
    pub queues: u32,
    /// The queue priority classes to set, by queue.
    pub priorities: BTreeMap<u16, Priority>,
    /// The layout, for the report and the first lines.
    pub report: LayoutReport,
}

/// What the plan needs to know of the device and the replay.
pub struct PlanInput<'a> {
    /// Logical capacity, bytes.
    pub capacity: u64,
    /// Mapping unit, bytes.
    pub unit: u64,
    /// Queue pairs the device has.
    pub device_queues: u32,
    /// Queue pairs the replay may use.
    pub queues: u32,
    /// The trace's volumes.
    pub volumes: &'a BTreeMap<u32, VolumeScan>,
    /// Base offsets (offsets layout).
    pub offsets: &'a BTreeMap<u32, u64>,
    /// Stride (offsets layout).
    pub stride: u64,
    /// The layout.
    pub layout: Layout,
    /// Volumes as flows, or one flow named `name`.
    pub flows: Option<&'a VolumeFlows>,
    /// The one flow's name.
    pub name: String,
}

fn up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// `1.5 GiB`-style bytes for messages.
pub fn human(b: u64) -> String {
    let units = [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (name, u) in units {
        if b >= u {
            return format!("{:.1} {name}", b as f64 / u as f64);
        }
    }
    format!("{b} B")
}

/// Lays the volumes out and makes the flows; a one-line error if a named volume is not in the
/// trace, the regions do not fit, or volumes sharing a queue ask for different classes.
pub fn plan(i: &PlanInput) -> Result<Plan, String> {
    let mut p = Plan::default();
    if let Some(f) = i.flows {
        let missing: Vec<String> =
            f.volumes.keys().filter(|v| !i.volumes.contains_key(v)).map(|v| v.to_string()).collect();
        if !missing.is_empty() {
            let have: Vec<String> = i.volumes.keys().take(12).map(|v| v.to_string()).collect();
            let more = if i.volumes.len() > 12 { ", ..." } else { "" };
            return Err(format!(
                "the trace has no volume {} (it has {}: {}{more})",
                missing.join(", "),
                i.volumes.len(),
                have.join(", ")
            ));
        }
    }
    // Layout.
    let align = REGION_ALIGN.max(i.unit);
    let mut report = LayoutReport { scale: 1.0, ..LayoutReport::default() };
    let mut bases: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    match i.layout {
        Layout::Offsets => {
            report.kind = "offsets".into();
            for &v in i.volumes.keys() {
                let base = i.offsets.get(&v).copied().unwrap_or(v as u64 * i.stride);
                bases.insert(
                    v,
                    (base % i.capacity.max(1), i.capacity.saturating_sub(base % i.capacity.max(1))),
                );
            }
            // A volume folds if its addresses (base .. base + footprint, wrapped) meet another's.
            let spans: Vec<(u32, u64, u64)> = i
                .volumes
                .iter()
                .map(|(&v, s)| {
                    let base = i.offsets.get(&v).copied().unwrap_or(v as u64 * i.stride);
                    (v, base, base.saturating_add(s.footprint))
                })
                .collect();
            let wraps = |(_, b, e): (u32, u64, u64)| e > i.capacity || b >= i.capacity;
            let meet =
                |a: (u32, u64, u64), b: (u32, u64, u64)| wraps(a) || wraps(b) || (a.1 < b.2 && b.1 < a.2);
            report.folded_volumes =
                spans.iter().filter(|&&a| spans.iter().any(|&b| b.0 != a.0 && meet(a, b))).count() as u32;
        }
        Layout::Footprint { fit } => {
            report.kind = "footprint".into();
            let sizes: Vec<(u32, u64)> =
                i.volumes.iter().map(|(&v, s)| (v, up(s.footprint.max(1), align))).collect();
            let total: u64 = sizes.iter().map(|s| s.1).sum();
            let room = i.capacity / align * align;
            let mut scale = 1.0;
            if total > room {
                let n = sizes.len() as u64;
                if !fit || n * align > room {
                    let why = if fit {
                        format!(
                            "{} volumes need at least {} each; the device has {}",
                            n,
                            human(align),
                            human(i.capacity)
                        )
                    } else {
                        format!(
                            "{} volumes' regions need {}; the device has {} (--fit scales them down)",
                            n,
                            human(total),
                            human(i.capacity)
                        )
                    };
                    return Err(format!("volume regions do not fit: {why}"));
                }
                // Every region keeps at least one alignment unit; the rest of the room is
                // shared in proportion to what each needs beyond that.
                let extra = (room - n * align) as f64 / (total - n * align) as f64;
                scale = extra;
            }
            let mut at = 0;
            for (v, size) in sizes {
                let size = if scale < 1.0 {
                    align + ((size - align) as f64 * scale) as u64 / align * align
                } else {
                    size
                };
                bases.insert(v, (at, size));
                p.regions.insert(v, (at, size));
                at += size;
            }
            debug_assert!(at <= room, "{at} > {room}");
            if scale < 1.0 {
                scale = at as f64 / total as f64;
            }
            report.scale = scale;
        }
    }
    // Flows.
    let mut flow_of: BTreeMap<u32, Option<u32>> = BTreeMap::new();
    let mut pid_of: BTreeMap<u32, Option<u16>> = BTreeMap::new();
    let mut prio_of_flow: Vec<Option<Priority>> = Vec::new();
    match i.flows {
        None => {
            p.flows.push(FlowPlan { name: i.name.clone(), queue: None, priority: None });
            prio_of_flow.push(None);
            for &v in i.volumes.keys() {
                flow_of.insert(v, Some(0));
                pid_of.insert(v, None);
            }
        }
        Some(f) => {
            let mut others = None;
            for &v in i.volumes.keys() {
                let named = f.volumes.get(&v);
                let flow = match (named, f.others) {
                    (Some(_), _) | (None, Others::Flows) => {
                        p.flows.push(FlowPlan { name: format!("vol {v}"), queue: None, priority: None });
                        prio_of_flow.push(named.and_then(|s| s.priority));
                        Some(p.flows.len() as u32 - 1)
                    }
                    (None, Others::Group) => Some(*others.get_or_insert_with(|| {
                        p.flows.push(FlowPlan { name: "others".into(), queue: None, priority: None });
                        prio_of_flow.push(None);
                        p.flows.len() as u32 - 1
                    })),
                    (None, Others::Drop) => None,
                };
                flow_of.insert(v, flow);
                pid_of.insert(v, named.and_then(|s| s.pid));
            }
            if p.flows.is_empty() {
                return Err("every volume of the trace is dropped: name a volume it has".into());
            }
        }
    }
    // Queues: a flow per queue, round robin beyond the queues there are.
    let n = p.flows.len() as u32;
    p.queues = if i.flows.is_some() {
        n.min(i.queues).min(i.device_queues).max(1)
    } else {
        i.queues.min(i.device_queues).max(1)
    };
    if i.flows.is_some() {
        for (f, flow) in p.flows.iter_mut().enumerate() {
            let q = (f as u32 % p.queues) as u16 + 1;
            flow.queue = Some(q);
            flow.priority = prio_of_flow[f];
            if let Some(c) = flow.priority {
                match p.priorities.get(&q) {
                    Some(&other) if other != c => {
                        return Err(format!(
                            "{} asks for priority {} but shares queue {q} with a flow of priority {} \
                             (more flows than the {} queues): give fewer volumes flows of their own",
                            flow.name,
                            format!("{c:?}").to_lowercase(),
                            format!("{other:?}").to_lowercase(),
                            p.queues
                        ));
                    }
                    _ => {
                        p.priorities.insert(q, c);
                    }
                }
            }
        }
        // A flow without a class on a queue another flow gave one: it shares that class.
        for (f, flow) in p.flows.iter().enumerate() {
            if prio_of_flow[f].is_none() && flow.queue.is_some_and(|q| p.priorities.contains_key(&q)) {
                return Err(format!(
                    "{} shares queue {} with a flow given a priority (more flows than queues): give it the same priority or fewer flows",
                    flow.name,
                    flow.queue.unwrap_or(0)
                ));
            }
        }
    }
    report.flows = n;
    report.queues = p.queues;
    for (&v, s) in i.volumes {
        let (base, size) = bases[&v];
        let flow = flow_of[&v];
        let fp = flow.map(|f| &p.flows[f as usize]);
        report.volumes.push(VolumeLayout {
            volume: v,
            requests: s.requests,
            footprint: s.footprint,
            base,
            size,
            flow: fp.map(|f| f.name.clone()),
            queue: fp.and_then(|f| f.queue),
            pid: pid_of[&v],
            priority: fp.and_then(|f| f.priority),
        });
        p.route.insert(v, (flow, pid_of[&v]));
    }
    p.report = report;
    Ok(p)
}

impl Plan {
    /// The lines to print before the replay: the layout (at most `rows` volumes), a warning if
    /// volumes fold onto the same addresses, a note if flows share queues. None for a trace of
    /// one volume replayed as one flow at its offsets.
    pub fn lines(&self, rows: usize) -> Vec<String> {
        let r = &self.report;
        let mut out = Vec::new();
        let nv = r.volumes.len();
        if nv <= 1 && r.kind == "offsets" && r.flows <= 1 {
            return out; // one volume where it always was: nothing to show
        }
        let head = match r.kind.as_str() {
            "footprint" if r.scale < 1.0 => {
                format!(
                    "{nv} volume(s), each its own region sized by its footprint, scaled by {:.4} to fit:",
                    r.scale
                )
            }
            "footprint" => format!("{nv} volume(s), each its own region sized by its footprint:"),
            _ => format!("{nv} volume(s) at their base offsets, folding into the device's capacity:"),
        };
        out.push(format!("layout: {head}"));
        out.push(format!(
            "  {:>8} {:>10} {:>12} {:>12} {:>12}  {}",
            "volume", "requests", "footprint", "base", "size", "flow (queue)"
        ));
        for v in r.volumes.iter().take(rows) {
            let flow = match (&v.flow, v.queue) {
                (Some(f), Some(q)) => format!("{f} ({q})"),
                (Some(f), None) => f.clone(),
                (None, _) => "dropped".into(),
            };
            let mut extra = String::new();
            if let Some(pid) = v.pid {
                extra += &format!(" pid={pid}");
            }
            if let Some(c) = v.priority {
                extra += &format!(" priority={}", format!("{c:?}").to_lowercase());
            }
            out.push(format!(
                "  {:>8} {:>10} {:>12} {:>12} {:>12}  {flow}{extra}",
                v.volume,
                v.requests,
                human(v.footprint),
                human(v.base),
                human(v.size)
            ));
        }
        if nv > rows {
            out.push(format!(
                "  ... and {} more volumes (the report's replay.layout has them all)",
                nv - rows
            ));
        }
        if r.folded_volumes > 1 {
            out.push(format!(
                "warning: {} of {} volumes fold onto the same device addresses; --layout footprint gives each its own region",
                r.folded_volumes, nv
            ));
        }
        if r.flows > r.queues && r.flows > 1 {
            out.push(format!(
                "note: {} flows share {} queue pairs round robin (flow f on queue f mod {} + 1)",
                r.flows, r.queues, r.queues
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn vols(f: &[(u32, u64)]) -> BTreeMap<u32, VolumeScan> {
        f.iter().map(|&(v, fp)| (v, VolumeScan { requests: 1, footprint: fp })).collect()
    }

    fn input<'a>(
        v: &'a BTreeMap<u32, VolumeScan>,
        layout: Layout,
        flows: Option<&'a VolumeFlows>,
    ) -> PlanInput<'a> {
        static NONE: BTreeMap<u32, u64> = BTreeMap::new();
        PlanInput {
            capacity: 100 * MIB,
            unit: 4096,
            device_queues: 2,
            queues: 8,
            volumes: v,
            offsets: &NONE,
            stride: 0,
            layout,
            flows,
            name: "t".into(),
        }
    }

    #[test]
    fn footprint_regions_are_disjoint_aligned_and_fit_or_scale() {
        let v = vols(&[(0, 10 * MIB + 1), (3, 20 * MIB), (7, 1)]);
        let p = plan(&input(&v, Layout::Footprint { fit: false }, None)).unwrap();
        assert_eq!(p.regions[&0], (0, 11 * MIB));
        assert_eq!(p.regions[&3], (11 * MIB, 20 * MIB));
        assert_eq!(p.regions[&7], (31 * MIB, MIB));
        let big = vols(&[(0, 60 * MIB), (1, 60 * MIB)]);
        let e = plan(&input(&big, Layout::Footprint { fit: false }, None)).unwrap_err();
        assert!(e.contains("do not fit") && e.contains("--fit"), "{e}");
        let p = plan(&input(&big, Layout::Footprint { fit: true }, None)).unwrap();
        let (a, b) = (p.regions[&0], p.regions[&1]);
        assert!(a.0 + a.1 <= b.0 && b.0 + b.1 <= 100 * MIB, "{a:?} {b:?}");
        assert!(p.report.scale < 1.0 && p.report.scale > 0.8, "{}", p.report.scale);
    }

    #[test]
    fn folding_is_counted_and_flows_share_queues() {
        let v = vols(&[(0, MIB), (1, MIB), (2, MIB)]);
        let f = VolumeFlows::default();
        let p = plan(&input(&v, Layout::Offsets, Some(&f))).unwrap();
        assert_eq!(p.report.folded_volumes, 3);
        assert_eq!((p.flows.len(), p.queues), (3, 2));
        assert_eq!(p.flows.iter().map(|f| f.queue.unwrap()).collect::<Vec<_>>(), vec![1, 2, 1]);
        let lines = p.lines(8).join("\n");
        assert!(lines.contains("warning: 3 of 3 volumes fold"), "{lines}");
        assert!(lines.contains("3 flows share 2 queue pairs"), "{lines}");
        // Named volumes, the rest grouped or dropped; a volume the trace lacks.
        let mut f = VolumeFlows { others: Others::Group, ..VolumeFlows::default() };
        f.volumes.insert(1, VolumeSettings { pid: Some(2), priority: Some(Priority::Urgent) });
        let p = plan(&input(&v, Layout::Offsets, Some(&f))).unwrap();
        assert_eq!(p.flows.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), vec!["others", "vol 1"]);
        assert_eq!(p.route[&1], (Some(1), Some(2)));
        assert_eq!(p.priorities.get(&2), Some(&Priority::Urgent));
        f.others = Others::Drop;
        let p = plan(&input(&v, Layout::Offsets, Some(&f))).unwrap();
        assert_eq!((p.flows.len(), p.route[&0].0), (1, None));
        f.volumes.insert(9, VolumeSettings::default());
        let e = plan(&input(&v, Layout::Offsets, Some(&f))).unwrap_err();
        assert_eq!(e, "the trace has no volume 9 (it has 3: 0, 1, 2)");
    }
}
