//! `ssdlab replay TRACE [DEVICE]` (and `ssdlab run --trace FILE`): replay a block trace.

use std::path::Path;

use anyhow::{Context, Result, bail};
use host::replay::{Align, ReplayMode, ReplaySpec};
use host::trace::ReadOptions;

use super::run::{Workload, execute};
use crate::cli::{AlignArg, ReplayArgs, ReplayCmd, ReplayModeArg};

pub fn run(a: ReplayCmd) -> Result<()> {
    let workload = Workload::Trace(Box::new(spec(&a.trace, &a.replay)?));
    execute(a.device.as_deref(), &a.start, false, &workload, &a.output, &a.common)
}

/// The replay the flags describe, checked.
pub(crate) fn spec(path: &Path, a: &ReplayArgs) -> Result<ReplaySpec> {
    let mut s = ReplaySpec::new(path);
    s.read = ReadOptions {
        format: a.format,
        skip_bad_lines: a.skip_bad_lines,
        blkparse_action: a.blkparse_action,
    };
    s.mode = match a.mode {
        ReplayModeArg::Timed => ReplayMode::Timed { speed: a.speed },
        ReplayModeArg::Closed => ReplayMode::ClosedLoop { depth: a.depth },
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
    s.max_records = a.max_records;
    s.placement = a.placement;
    s.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(s)
}
