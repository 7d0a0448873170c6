//! When dirty cache lines go to flash: the write-back part's state and its policy. A policy is
//! a type implementing [`WriteBackPolicy`]; the configuration's [`WriteBackMode`] names the
//! built-in ones ([`ArrayWriteBack`], [`OnDemandWriteBack`]). The write-back flows themselves
//! are `writeback.rs`'s.

use std::cell::Cell;
use std::rc::Rc;

use nand::Geometry;
use sim::Cx;
use sim::sync::Notify;

use crate::ftl::config::{CacheConfig, WriteBackMode};

/// The data cache's lines, counted by state, as a write-back policy sees them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LineCounts {
    /// Lines holding data newer than flash, not yet being written back.
    pub dirty: u64,
    /// Lines being written back.
    pub writing: u64,
    /// Lines in all.
    pub capacity: u64,
}

/// Decides when dirty lines go to flash.
///
/// The FTL asks [`wanted`](Self::wanted) after every host write to the cache and whenever a
/// background write-back ends, and starts another (a page on every plane of a die, the least
/// recently used dirty lines) while the answer is yes and fewer than
/// [`parallel`](Self::parallel) are in flight. A request that finds no free or clean line
/// writes back itself if [`on_demand`](Self::on_demand), else waits for the background ones.
/// The implementer decides from the counts alone; with `on_demand` false it must want
/// write-backs while the cache has no free line, or such a request would wait forever.
pub trait WriteBackPolicy {
    /// Whether another background write-back should start now.
    fn wanted(&self, lines: LineCounts) -> bool;
    /// Background write-backs in flight at most.
    fn parallel(&self) -> u32;
    /// Whether a request that needs a line writes the oldest dirty page back itself.
    fn on_demand(&self) -> bool;
}

/// Background write-backs keep the whole array programming while the cache is short of lines
/// (see [`WriteBackMode::Array`]), plus the optional early flush past a dirty fraction.
pub struct ArrayWriteBack {
    /// Flush early once more than this fraction of the lines is dirty.
    pub threshold: Option<f64>,
    /// Write-backs in flight at most.
    pub parallel: u32,
    /// Lines one write-back takes (a page on every plane of a die).
    pub job_units: u64,
}

impl WriteBackPolicy for ArrayWriteBack {
    /// Past the flush threshold, or once fewer lines are free or clean than a full pool of
    /// write-backs takes (at most half the cache). Lines being written back count as taken:
    /// counting them as free left no line free while the pool was busy, so every host write
    /// waited a whole program for the write-back that freed its line. A job waits for a full
    /// multi-plane page of dirty lines: part pages are padding, which a device filled
    /// sequentially can never collect back.
    fn wanted(&self, c: LineCounts) -> bool {
        if past(self.threshold, c) {
            return true;
        }
        let pool = self.parallel as u64 * self.job_units;
        c.dirty >= self.job_units && c.dirty + c.writing > c.capacity - pool.min(c.capacity / 2)
    }

    fn parallel(&self) -> u32 {
        self.parallel
    }

    fn on_demand(&self) -> bool {
        false
    }
}

/// SoftSSD's request-driven write-back (see [`WriteBackMode::OnDemand`]): background
/// write-backs only past the flush threshold, if one is set.
pub struct OnDemandWriteBack {
    /// Flush early once more than this fraction of the lines is dirty.
    pub threshold: Option<f64>,
    /// Write-backs in flight at most.
    pub parallel: u32,
}

impl WriteBackPolicy for OnDemandWriteBack {
    fn wanted(&self, c: LineCounts) -> bool {
        past(self.threshold, c)
    }

    fn parallel(&self) -> u32 {
        self.parallel
    }

    fn on_demand(&self) -> bool {
        true
    }
}

/// Whether more than the `threshold` fraction of the lines is dirty.
fn past(threshold: Option<f64>, c: LineCounts) -> bool {
    threshold.is_some_and(|t| c.dirty > (t * c.capacity as f64) as u64)
}

impl CacheConfig {
    /// The built-in write-back policy this names on `geo`.
    pub fn write_back_policy(&self, geo: &Geometry) -> Rc<dyn WriteBackPolicy> {
        let parallel = self.flush_parallel(geo);
        match self.write_back {
            WriteBackMode::Array => Rc::new(ArrayWriteBack {
                threshold: self.flush_threshold,
                parallel,
                job_units: (geo.units_per_page() * geo.planes) as u64,
            }),
            WriteBackMode::OnDemand => {
                Rc::new(OnDemandWriteBack { threshold: self.flush_threshold, parallel })
            }
        }
    }
}

/// The write-back part: its policy and the write-backs in flight.
pub(crate) struct WriteBack {
    /// When dirty lines go to flash.
    pub policy: Rc<dyn WriteBackPolicy>,
    /// Background write-backs in flight.
    pub flushing: Cell<u32>,
    /// The cache partition the next background write-back looks at first.
    pub next_part: Cell<usize>,
    /// Lines being written back by requests to make room (on demand).
    pub freeing: Cell<u32>,
    /// Requests waiting for a free line.
    pub line_waiters: Cell<u32>,
    /// Wakes every request waiting for a cache line when a line changes state (a write-back or
    /// a fill ends, a trim frees one).
    pub free_line: Notify,
}

impl WriteBack {
    /// No write-back in flight yet, under `policy`.
    pub fn new(cx: &Cx, policy: Rc<dyn WriteBackPolicy>) -> WriteBack {
        WriteBack {
            policy,
            flushing: Cell::new(0),
            next_part: Cell::new(0),
            freeing: Cell::new(0),
            line_waiters: Cell::new(0),
            free_line: Notify::new(cx, "free cache line"),
        }
    }
}
