//! [`TraceFormat`]: the trace formats the reader understands, and their names.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A block-trace text format. See the [module documentation](super) for each one's fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// SPC, as the UMass Trace Repository publishes it: `ASU,LBA,Size,Opcode,Timestamp[,...]`.
    Spc,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// MQSim's DiskSim-style ASCII: `arrival_time_ns device start_lba size_sectors type`.
    #[serde(alias = "disksim")]
    Mqsim,
    /// blkparse's default text output.
    Blkparse,
    /// fio iolog, version 2 or 3 (the header line says which).
    Iolog,
    /// An ssdlab recording (`ssdlab serve --record FILE`).
    Recording,
}

impl TraceFormat {
    /// Every format, in the order auto-detection tries them.
    pub const ALL: [TraceFormat; 6] = [
        TraceFormat::Recording,
        TraceFormat::Iolog,
        TraceFormat::Spc,
        TraceFormat::Msr,
        TraceFormat::Mqsim,
        TraceFormat::Blkparse,
    ];

    /// The name [`FromStr`] accepts and [`Display`](fmt::Display) prints (`spc`, `msr`, `mqsim`,
    /// `blkparse`, `iolog`, `recording`).
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Spc => "spc",
            TraceFormat::Msr => "msr",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Iolog => "iolog",
            TraceFormat::Recording => "recording",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name [`TraceFormat::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown trace format '{0}' (expected spc, msr, mqsim, disksim, blkparse, iolog or recording)")]
pub struct UnknownFormat(pub String);

impl FromStr for TraceFormat {
    type Err = UnknownFormat;

    /// `spc`, `msr`, `mqsim` (or `disksim`), `blkparse`, `iolog`, `recording`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "spc" => Ok(TraceFormat::Spc),
            "msr" => Ok(TraceFormat::Msr),
            "mqsim" | "disksim" => Ok(TraceFormat::Mqsim),
            "blkparse" => Ok(TraceFormat::Blkparse),
            "iolog" => Ok(TraceFormat::Iolog),
            "recording" => Ok(TraceFormat::Recording),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}
