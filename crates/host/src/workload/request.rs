//! What a job asks the device to do: one [`IoRequest`] per I/O, in bytes.

use serde::{Deserialize, Serialize};

/// The direction of one I/O. fio calls these data directions (`ddir`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoOp {
    /// Read `len` bytes.
    Read,
    /// Write `len` bytes.
    Write,
    /// Deallocate `len` bytes (NVMe Dataset Management, deallocate).
    Trim,
}

impl IoOp {
    /// All directions, in fio's `read,write,trim` order.
    pub const ALL: [IoOp; 3] = [IoOp::Read, IoOp::Write, IoOp::Trim];

    /// The lower-case name fio uses (`read`, `write`, `trim`).
    pub fn name(self) -> &'static str {
        match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Trim => "trim",
        }
    }
}

/// One I/O of a job's stream. `offset` and `len` are in bytes and always multiples of the
/// device's LBA size; `offset + len` never passes the end of the job's region.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct IoRequest {
    /// Read, write or trim.
    pub op: IoOp,
    /// Byte offset from the start of the namespace.
    pub offset: u64,
    /// Length in bytes (at least one LBA).
    pub len: u32,
}

/// A value for each direction, in fio's `read,write,trim` order: the shape of fio's
/// comma-separated options (`bs=4k,16k`, `rate=10m,5m`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerDir<T> {
    /// The value for reads.
    pub read: T,
    /// The value for writes.
    pub write: T,
    /// The value for trims.
    pub trim: T,
}

impl<T: Clone> PerDir<T> {
    /// The same value for every direction.
    pub fn splat(value: T) -> Self {
        PerDir { read: value.clone(), write: value.clone(), trim: value }
    }
}

impl<T> PerDir<T> {
    /// The value for `op`.
    pub fn get(&self, op: IoOp) -> &T {
        match op {
            IoOp::Read => &self.read,
            IoOp::Write => &self.write,
            IoOp::Trim => &self.trim,
        }
    }

    /// The value for `op`, mutably.
    pub fn get_mut(&mut self, op: IoOp) -> &mut T {
        match op {
            IoOp::Read => &mut self.read,
            IoOp::Write => &mut self.write,
            IoOp::Trim => &mut self.trim,
        }
    }
}
