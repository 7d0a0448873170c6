//! What a physical workload asks for.

use nand::Geometry;
use serde::{Deserialize, Serialize};
use sim::ByteSize;
use sim::config::{ConfigError, ensure};

/// The operation mix.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhysOp {
    /// Page reads of pre-programmed blocks.
    #[default]
    Read,
    /// Page programs into fresh blocks, in page order.
    Program,
    /// Block erases.
    Erase,
    /// Reads and programs mixed by `read_pct`.
    Mixed,
}

/// How addresses are chosen.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhysPattern {
    /// Round robin over the target dies, channel first (planes of one die back to back, so the
    /// FIL can batch them).
    #[default]
    Stripe,
    /// A uniformly random target die (and, for reads, page) per transaction.
    Random,
}

/// A raw flash workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysWorkload {
    /// Operation. Default: read.
    #[serde(default)]
    pub op: PhysOp,
    /// Percentage of reads for `mixed`. Default: 50.
    #[serde(default = "default_read_pct")]
    pub read_pct: u32,
    /// Address pattern. Default: stripe.
    #[serde(default)]
    pub pattern: PhysPattern,
    /// Use only the first N channels. Default: all.
    #[serde(default)]
    pub channels: Option<u32>,
    /// Use only the first N chips of each channel. Default: all.
    #[serde(default)]
    pub ways: Option<u32>,
    /// Use only the first N dies of each chip. Default: all.
    #[serde(default)]
    pub dies: Option<u32>,
    /// Use only the first N planes of each die. Default: all.
    #[serde(default)]
    pub planes: Option<u32>,
    /// Transactions kept outstanding (closed loop), or the cap on outstanding ones with `rate`.
    /// Default: 64.
    #[serde(default = "default_qd")]
    pub qd: u32,
    /// Open loop: issue this many transactions per second of simulated time. Default: closed loop.
    #[serde(default)]
    pub rate: Option<f64>,
    /// Transactions to issue. Default: 10000.
    #[serde(default = "default_count")]
    pub count: u64,
    /// Bytes to transfer per read (a partial page). Default: the whole page.
    #[serde(default)]
    pub read_bytes: Option<ByteSize>,
}

fn default_read_pct() -> u32 {
    50
}
fn default_qd() -> u32 {
    64
}
fn default_count() -> u64 {
    10_000
}

impl Default for PhysWorkload {
    fn default() -> Self {
        PhysWorkload {
            op: PhysOp::Read,
            read_pct: default_read_pct(),
            pattern: PhysPattern::Stripe,
            channels: None,
            ways: None,
            dies: None,
            planes: None,
            qd: default_qd(),
            rate: None,
            count: default_count(),
            read_bytes: None,
        }
    }
}

/// The part of the array a workload uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub channels: u32,
    pub ways: u32,
    pub dies: u32,
    pub planes: u32,
}

impl Span {
    pub fn die_count(&self) -> u32 {
        self.channels * self.ways * self.dies
    }
}

/// Blocks per plane pre-programmed for reads.
pub(crate) const READ_BLOCKS: u32 = 2;

impl PhysWorkload {
    pub(crate) fn span(&self, geo: &Geometry) -> Span {
        Span {
            channels: self.channels.unwrap_or(geo.channels),
            ways: self.ways.unwrap_or(geo.ways),
            dies: self.dies.unwrap_or(geo.dies),
            planes: self.planes.unwrap_or(geo.planes),
        }
    }

    /// Whether programs are part of the mix.
    pub(crate) fn programs(&self) -> bool {
        matches!(self.op, PhysOp::Program | PhysOp::Mixed)
    }

    /// Checks the workload against the geometry; the error names the first bad field.
    pub fn validate(&self, geo: &Geometry) -> Result<(), ConfigError> {
        for (name, v, max) in [
            ("channels", self.channels, geo.channels),
            ("ways", self.ways, geo.ways),
            ("dies", self.dies, geo.dies),
            ("planes", self.planes, geo.planes),
        ] {
            if let Some(v) = v {
                ensure(v >= 1 && v <= max, name, || format!("must be between 1 and {max} (got {v})"))?;
            }
        }
        ensure(self.qd >= 1, "qd", || "must be at least 1".into())?;
        ensure(self.count >= 1, "count", || "must be at least 1".into())?;
        ensure(self.read_pct <= 100, "read_pct", || format!("is a percentage (got {})", self.read_pct))?;
        if let Some(r) = self.rate {
            ensure(r.is_finite() && r > 0.0, "rate", || format!("must be a positive number (got {r})"))?;
        }
        if let Some(b) = self.read_bytes {
            let page = geo.page_size.bytes() + geo.oob_size.bytes();
            ensure(b.bytes() >= 1 && b.bytes() <= page, "read_bytes", || {
                format!("must be between 1B and a page with its OOB ({page}B), got {b}")
            })?;
        }
        let span = self.span(geo);
        let reads = self.op == PhysOp::Read || self.op == PhysOp::Mixed;
        ensure(!reads || geo.blocks >= READ_BLOCKS + self.programs() as u32, "op", || {
            format!(
                "reads need {READ_BLOCKS} pre-programmed blocks per plane; the geometry has {}",
                geo.blocks
            )
        })?;
        if self.programs() {
            let fresh = (geo.blocks - if reads { READ_BLOCKS } else { 0 }) as u64;
            let capacity = span.die_count() as u64 * span.planes as u64 * fresh * geo.pages as u64;
            ensure(self.count <= capacity, "count", || {
                format!(
                    "{} programs do not fit in the {capacity} free pages of the selected dies",
                    self.count
                )
            })?;
        }
        Ok(())
    }
}
