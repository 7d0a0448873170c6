//! `ssdlab replay TRACE [DEVICE]` (and `ssdlab run --trace FILE`): replay a block trace.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use firmware::hil::Priority;
use host::replay::{Align, Layout, Others, ReplayMode, ReplaySpec, VolumeFlows, VolumeScan, VolumeSettings};
use host::trace::ReadOptions;

use super::run::{Workload, execute};
use crate::cli::{AlignArg, LayoutArg, OthersArg, ReplayArgs, ReplayCmd, ReplayModeArg};

pub fn run(a: ReplayCmd) -> Result<()> {
    let workload = Workload::Trace(Box::new(spec(&a.trace, &a.replay)?));
    execute(a.device.as_deref(), &a.start, false, a.alone, &workload, &a.output, &a.common)
}

/// The pacing the flags describe: each mode's own option, and no other mode's.
fn mode(a: &ReplayArgs) -> Result<ReplayMode> {
    if a.mode != ReplayModeArg::Rate && a.replay_iops.is_some() {
        bail!(
            "--replay-iops is for --mode rate (an open loop at a fixed rate): add --mode rate, or leave out --replay-iops"
        );
    }
    Ok(match (a.mode, a.speed, a.depth) {
        (ReplayModeArg::Timed, _, Some(_)) => bail!(
            "--depth is for --mode closed; a timed replay (the default) issues at the trace's \
             timestamps: add --mode closed, or leave out --depth"
        ),
        (ReplayModeArg::Closed, Some(_), _) => {
            bail!(
                "--speed is for timed replays; --mode closed ignores the trace's timestamps: leave out --speed"
            )
        }
        (ReplayModeArg::Rate, Some(_), _) | (ReplayModeArg::Rate, _, Some(_)) => bail!(
            "--mode rate issues at --replay-iops whatever the timestamps and the completions: leave out --speed and --depth"
        ),
        (ReplayModeArg::Rate, None, None) => {
            let Some(iops) = a.replay_iops else {
                bail!("--mode rate needs --replay-iops N (requests per second of simulated time)");
            };
            if !(iops.is_finite() && iops > 0.0) {
                bail!("--replay-iops must be a positive number of requests per second (got {iops})");
            }
            ReplayMode::Rate { iops }
        }
        (ReplayModeArg::Timed, speed, None) => ReplayMode::Timed { speed: speed.unwrap_or(1.0) },
        (ReplayModeArg::Closed, None, depth) => ReplayMode::ClosedLoop { depth: depth.unwrap_or(32) },
    })
}

/// The replay the flags describe, checked.
pub(crate) fn spec(path: &Path, a: &ReplayArgs) -> Result<ReplaySpec> {
    let mut s = ReplaySpec::new(path);
    s.read = ReadOptions {
        format: a.format,
        skip_bad_lines: a.skip_bad_lines,
        blkparse_action: a.blkparse_action,
    };
    s.mode = mode(a)?;
    s.align = match a.align {
        AlignArg::Widen => Align::Widen,
        AlignArg::Split => Align::Split,
    };
    for v in &a.volume_offset {
        let Some((vol, bytes)) = v.split_once('=') else {
            bail!("--volume-offset {v}: expected VOLUME=BYTES, e.g. 1=64GiB");
        };
        let vol: u32 =
            vol.trim().parse().with_context(|| format!("--volume-offset {v}: bad volume number"))?;
        let bytes: sim::ByteSize = bytes.trim().parse().with_context(|| format!("--volume-offset {v}"))?;
        s.volume_offsets.insert(vol, bytes.bytes());
    }
    s.volume_stride = a.volume_stride.map_or(0, |b| b.bytes());
    s.layout = match (a.layout, a.fit) {
        (LayoutArg::Offsets, true) => bail!("--fit scales regions: add --layout footprint"),
        (LayoutArg::Offsets, false) => Layout::Offsets,
        (LayoutArg::Footprint, fit) => Layout::Footprint { fit },
    };
    s.volume_flows = volume_flows(a)?;
    s.queues = match (a.queues, &s.volume_flows) {
        (Some(q), _) => q,
        (None, None) => 8,
        (None, Some(_)) => u32::MAX,
    };
    if a.max_records == Some(0) {
        bail!("--max-records must be at least 1");
    }
    s.max_records = a.max_records;
    if a.trace_queues == Some(true) && a.queues.is_some() {
        bail!("--trace-queues puts each request on the trace's own queue: leave out --queues");
    }
    s.trace_queues = a.trace_queues;
    s.placement = a.placement;
    s.pid_per_volume = a.pid_per_volume;
    s.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(s)
}

/// The volumes as flows the flags and the volume file describe (`None`: one flow).
fn volume_flows(a: &ReplayArgs) -> Result<Option<VolumeFlows>> {
    let mut f = VolumeFlows::default();
    let mut others = None;
    if let Some(path) = &a.volume_file {
        let (o, volumes) = volume_file(path)?;
        others = o;
        f.volumes = volumes;
    }
    for v in &a.volume {
        let (vol, settings) = v.split_once(':').unwrap_or((v, ""));
        let vol: u32 = vol.trim().parse().map_err(|_| {
            anyhow::anyhow!(
                "--volume {v}: bad volume number '{vol}' (expected e.g. 3 or 3:pid=1,priority=high)"
            )
        })?;
        let s = f.volumes.entry(vol).or_default();
        for kv in settings.split(',').map(str::trim).filter(|kv| !kv.is_empty()) {
            let Some((k, val)) = kv.split_once('=') else {
                bail!("--volume {v}: expected KEY=VALUE, got '{kv}' (keys: pid, priority)");
            };
            match k.trim() {
                "pid" => {
                    s.pid = Some(
                        val.trim().parse().map_err(|_| anyhow::anyhow!("--volume {v}: bad pid '{val}'"))?,
                    )
                }
                "priority" => {
                    s.priority = Some(priority(val.trim()).with_context(|| format!("--volume {v}"))?)
                }
                k => bail!("--volume {v}: unknown key '{k}' (keys: pid, priority)"),
            }
        }
    }
    let others = match a.other_volumes {
        Some(OthersArg::Flows) => Some(Others::Flows),
        Some(OthersArg::Group) => Some(Others::Group),
        Some(OthersArg::Drop) => Some(Others::Drop),
        None => others,
    };
    if !a.volume_flows && a.volume.is_empty() && a.volume_file.is_none() && others.is_none() {
        return Ok(None);
    }
    f.others = others.unwrap_or_default();
    Ok(Some(f))
}

/// A queue priority class by name.
fn priority(word: &str) -> Result<Priority> {
    Ok(match word {
        "urgent" => Priority::Urgent,
        "high" => Priority::High,
        "medium" => Priority::Medium,
        "low" => Priority::Low,
        _ => bail!("unknown priority '{word}' (urgent, high, medium or low)"),
    })
}

/// `--volume-file`: `other = "flows" | "group" | "drop"` and `[volume.N]` tables of `pid` and
/// `priority`.
fn volume_file(path: &Path) -> Result<(Option<Others>, BTreeMap<u32, VolumeSettings>)> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        other: Option<String>,
        #[serde(default)]
        volume: BTreeMap<String, Entry>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        pid: Option<u16>,
        priority: Option<String>,
    }
    let name = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("--volume-file {name}"))?;
    let file: File = toml::from_str(&text).map_err(|e| {
        let line = e.span().map_or(0, |s| text[..s.start.min(text.len())].lines().count().max(1));
        anyhow::anyhow!("{name}:{line}: {}", e.message().trim())
    })?;
    let others = match file.other.as_deref() {
        None => None,
        Some("flows") => Some(Others::Flows),
        Some("group") => Some(Others::Group),
        Some("drop") => Some(Others::Drop),
        Some(w) => bail!("{name}: other = '{w}': expected flows, group or drop"),
    };
    let mut volumes = BTreeMap::new();
    for (k, e) in file.volume {
        let v: u32 = k.parse().map_err(|_| anyhow::anyhow!("{name}: [volume.{k}]: not a volume number"))?;
        let priority = match e.priority.as_deref() {
            Some(w) => Some(priority(w).with_context(|| format!("{name}: [volume.{k}]"))?),
            None => None,
        };
        volumes.insert(v, VolumeSettings { pid: e.pid, priority });
    }
    Ok((others, volumes))
}

/// Reads the whole trace once, before the device is built: a bad line anywhere fails now (not
/// after a replay of everything before it) and a trace with nothing to replay is an error.
/// Returns the warnings to give once every check has passed: skipped bad lines and (timed)
/// timestamps running backwards.
pub(crate) fn prescan(spec: &ReplaySpec) -> Result<(Vec<String>, BTreeMap<u32, VolumeScan>)> {
    let s = host::replay::scan(spec)?;
    let file = spec.path.display();
    let skipped = || {
        let first = s.first_bad_line.as_deref().unwrap_or("?");
        format!("{} skipped (the first: {first})", count(s.bad_lines, "bad line", "bad lines"))
    };
    if s.requests == 0 {
        let why = match (s.records, s.bad_lines) {
            (0, 0) => "the trace has no records".to_string(),
            (0, _) => format!("no records; {}", skipped()),
            (n, _) => format!(
                "{}: {}, {} of zero length",
                count(n, "record", "records"),
                count(s.flushes, "flush", "flushes"),
                s.zero_length
            ),
        };
        bail!("{file}: nothing to replay ({why})");
    }
    let mut warnings = Vec::new();
    if s.bad_lines > 0 {
        warnings.push(format!("warning: {}", skipped()));
    }
    if let (ReplayMode::Timed { .. }, Some(line)) = (spec.mode, s.first_backwards_line) {
        let (n, verb) =
            (count(s.backwards, "request", "requests"), if s.backwards == 1 { "is" } else { "are" });
        warnings.push(format!(
            "warning: {file}: {n} {verb} timestamped before an earlier one (the first at line {line}); \
             a timed replay issues them at once"
        ));
    }
    Ok((warnings, s.volumes))
}

/// `1 record`, `2 records`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
