//! Host memory accounted byte by byte over time: what is held now, by use, its peak, and its
//! integral over time (for the DRAM energy).

use sim::SimTime;

/// Memory held by use, with its history summarised.
#[derive(Clone, Debug)]
pub struct MemoryMeter {
    uses: Vec<(&'static str, u64)>,
    total: u64,
    peak: u64,
    /// Byte-nanoseconds up to `since`.
    integral: f64,
    since: SimTime,
}

impl MemoryMeter {
    /// Nothing held, from `now`.
    pub fn new(now: SimTime) -> Self {
        MemoryMeter { uses: Vec::new(), total: 0, peak: 0, integral: 0.0, since: now }
    }

    fn advance(&mut self, now: SimTime) {
        self.integral += self.total as f64 * now.saturating_since(self.since).as_nanos() as f64;
        self.since = self.since.max(now);
    }

    fn slot(&mut self, what: &'static str) -> &mut u64 {
        let i = match self.uses.iter().position(|(n, _)| *n == what) {
            Some(i) => i,
            None => {
                self.uses.push((what, 0));
                self.uses.len() - 1
            }
        };
        &mut self.uses[i].1
    }

    /// Sets the bytes held for `what` at `now`.
    pub fn set(&mut self, what: &'static str, bytes: u64, now: SimTime) {
        self.advance(now);
        let slot = self.slot(what);
        let old = std::mem::replace(slot, bytes);
        self.total = self.total - old + bytes;
        self.peak = self.peak.max(self.total);
    }

    /// Changes the bytes held for `what` by `delta` at `now` (never below zero).
    pub fn add(&mut self, what: &'static str, delta: i64, now: SimTime) {
        let cur = *self.slot(what);
        self.set(what, cur.saturating_add_signed(delta), now);
    }

    /// Bytes held now.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The most bytes held at once.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// Bytes held by use, in the order the uses first appeared.
    pub fn by_use(&self) -> Vec<(String, u64)> {
        self.uses.iter().map(|(n, b)| (n.to_string(), *b)).collect()
    }

    /// Byte-seconds held from the start to `now`.
    pub fn byte_secs(&self, now: SimTime) -> f64 {
        (self.integral + self.total as f64 * now.saturating_since(self.since).as_nanos() as f64) / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_peak_and_uses_follow_every_change() {
        let t = |ns| SimTime::from_nanos(ns);
        let mut m = MemoryMeter::new(t(0));
        m.set("map", 1000, t(0));
        m.add("buffer", 500, t(1_000_000_000));
        m.add("buffer", -500, t(2_000_000_000));
        assert_eq!((m.total(), m.peak()), (1000, 1500));
        assert!((m.byte_secs(t(3_000_000_000)) - (3000.0 + 500.0)).abs() < 1e-6);
        assert_eq!(m.by_use(), vec![("map".to_string(), 1000), ("buffer".to_string(), 0)]);
    }
}
