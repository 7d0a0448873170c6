//! A counter that can be bumped through a shared reference.

use std::cell::Cell;

use serde::{Serialize, Serializer};

/// A monotonically increasing event count.
#[derive(Debug, Default, Clone)]
pub struct Counter(Cell<u64>);

impl Counter {
    /// Adds one.
    pub fn inc(&self) {
        self.add(1);
    }
    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.set(self.0.get() + n);
    }
    /// The count.
    pub fn get(&self) -> u64 {
        self.0.get()
    }
}

impl Serialize for Counter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.get())
    }
}
