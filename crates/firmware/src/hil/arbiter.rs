//! Submission-queue arbitration: round robin, or NVMe weighted round robin with an urgent
//! class served first.

use std::rc::Rc;

use crate::hil::config::Arbitration;
use crate::hil::queues::{Priority, QueuePair};

/// Chooses the next queue to fetch from and how many commands to take.
pub struct Arbiter {
    weighted: bool,
    burst: usize,
    /// Commands of one queue inside the device at most (`queue_fetch_size`).
    limit: Option<usize>,
    /// Commands of all queues inside the device at most (`device_commands`).
    total: Option<usize>,
    /// Weighted rounds: one entry per fetch turn (high x w_h, medium x w_m, low x w_l).
    schedule: Vec<Priority>,
    pos: usize,
    /// Last queue served per class (urgent, high, medium, low); index 0 also for round robin.
    last: [usize; 4],
}

impl Arbiter {
    /// An arbiter fetching up to `burst` commands per turn, and never more than `limit` of one
    /// queue's commands, nor `total` of all queues' commands, into the device at once.
    pub fn new(kind: &Arbitration, burst: u32, limit: Option<u32>, total: Option<u32>) -> Self {
        let (weighted, schedule) = match *kind {
            Arbitration::RoundRobin => (false, Vec::new()),
            Arbitration::Weighted { high, medium, low } => {
                let mut s = Vec::new();
                s.extend(std::iter::repeat_n(Priority::High, high as usize));
                s.extend(std::iter::repeat_n(Priority::Medium, medium as usize));
                s.extend(std::iter::repeat_n(Priority::Low, low as usize));
                (true, s)
            }
        };
        Arbiter {
            weighted,
            burst: burst as usize,
            limit: limit.map(|l| l as usize),
            total: total.map(|t| t as usize),
            schedule,
            pos: 0,
            last: [0; 4],
        }
    }

    /// The next queue with commands waiting, and how many to fetch from it.
    pub fn next(&mut self, qs: &[Option<Rc<QueuePair>>]) -> Option<(Rc<QueuePair>, usize)> {
        // The device's free command slots (none free: nothing is fetched until one completes).
        let free = match self.total {
            Some(total) => {
                let inside: usize = qs.iter().flatten().map(|q| q.in_device.get() as usize).sum();
                total.saturating_sub(inside)
            }
            None => usize::MAX,
        };
        if free == 0 {
            return None;
        }
        let hit = self.choose(qs);
        hit.map(|(q, n)| (q, n.min(free)))
    }

    /// The next queue by class and round robin, and how many of its commands to fetch.
    fn choose(&mut self, qs: &[Option<Rc<QueuePair>>]) -> Option<(Rc<QueuePair>, usize)> {
        if !self.weighted {
            return self.pick(qs, None);
        }
        if let Some(hit) = self.pick(qs, Some(Priority::Urgent)) {
            return Some(hit);
        }
        for _ in 0..self.schedule.len() {
            let class = self.schedule[self.pos];
            self.pos = (self.pos + 1) % self.schedule.len();
            if let Some(hit) = self.pick(qs, Some(class)) {
                return Some(hit);
            }
        }
        None
    }

    /// Round robin among the non-empty queues of `class` (or all queues).
    fn pick(
        &mut self,
        qs: &[Option<Rc<QueuePair>>],
        class: Option<Priority>,
    ) -> Option<(Rc<QueuePair>, usize)> {
        let slot = class.map_or(0, |c| c as usize);
        let n = qs.len();
        let from = (self.last[slot] + 1).min(n);
        // Round robin from the queue after the last one served, wrapping around to it.
        for i in (from..n).chain(0..from) {
            let Some(q) = &qs[i] else { continue };
            // The room a queue has under the fetch limit (a queue at its limit is passed over).
            let room = self.limit.map_or(usize::MAX, |l| l.saturating_sub(q.in_device.get() as usize));
            let waiting = q.sq.borrow().len().min(room);
            if waiting > 0 && class.is_none_or(|c| q.priority == c) {
                self.last[slot] = i;
                return Some((q.clone(), waiting.min(self.burst)));
            }
        }
        None
    }
}
