//! `ssdlab replay TRACE [DEVICE]` (and `ssdlab run --trace FILE`): replay a block trace.

use std::path::Path;

use anyhow::{Context, Result, bail};
use host::replay::{Align, ReplayMode, ReplaySpec};
use host::trace::ReadOptions;

use super::run::{Workload, execute};
use crate::cli::{AlignArg, ReplayArgs, ReplayCmd, ReplayModeArg};

pub fn run(a: ReplayCmd) -> Result<()> {
    let workload = Workload::Trace(Box::new(spec(&a.trace, &a.replay)?));
    execute(a.device.as_deref(), &a.start, false, false, &workload, &a.output, &a.common)
}

/// The replay the flags describe, checked.
pub(crate) fn spec(path: &Path, a: &ReplayArgs) -> Result<ReplaySpec> {
    let mut s = ReplaySpec::new(path);
    s.read = ReadOptions {
        format: a.format,
        skip_bad_lines: a.skip_bad_lines,
        blkparse_action: a.blkparse_action,
    };
    s.mode = match (a.mode, a.speed, a.depth) {
        (ReplayModeArg::Timed, _, Some(_)) => bail!(
            "--depth is for --mode closed; a timed replay (the default) issues at the trace's \
             timestamps: add --mode closed, or leave out --depth"
        ),
        (ReplayModeArg::Closed, Some(_), _) => {
            bail!(
                "--speed is for timed replays; --mode closed ignores the trace's timestamps: leave out --speed"
            )
        }
        (ReplayModeArg::Timed, speed, None) => ReplayMode::Timed { speed: speed.unwrap_or(1.0) },
        (ReplayModeArg::Closed, None, depth) => ReplayMode::ClosedLoop { depth: depth.unwrap_or(32) },
    };
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
    s.queues = a.queues;
    if a.max_records == Some(0) {
        bail!("--max-records must be at least 1");
    }
    s.max_records = a.max_records;
    s.placement = a.placement;
    s.pid_per_volume = a.pid_per_volume;
    s.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(s)
}

/// Reads the whole trace once, before the device is built: a bad line anywhere fails now (not
/// after a replay of everything before it) and a trace with nothing to replay is an error.
/// Returns the warnings to give once every check has passed: skipped bad lines and (timed)
/// timestamps running backwards.
pub(crate) fn prescan(spec: &ReplaySpec) -> Result<Vec<String>> {
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
    Ok(warnings)
}

/// `1 record`, `2 records`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
