//! Transaction-scheduling policies: which of a die's queues the FIL serves next.

use nand::DieIdx;
use sim::SimTime;

use crate::fil::queues::DieQueues;
use crate::fil::txn::QueueKind;

/// What the FIL tells a policy about one die's queues.
pub struct QueueView<'a> {
    pub(crate) queues: &'a DieQueues,
    pub(crate) allowed: [bool; 7],
}

impl QueueView<'_> {
    /// Transactions waiting in queue `k`.
    pub fn len(&self, k: QueueKind) -> usize {
        self.queues.len(k)
    }

    /// When the head of queue `k` arrived at the FIL (`None` if the queue is empty).
    pub fn head_arrival(&self, k: QueueKind) -> Option<SimTime> {
        self.queues.head_arrival(k)
    }

    /// Whether the die could start the head of queue `k` now (a die whose array is busy with a
    /// cache program accepts only programs).
    pub fn allowed(&self, k: QueueKind) -> bool {
        self.allowed[k.index()]
    }

    /// Whether queue `k` is non-empty and allowed.
    pub fn eligible(&self, k: QueueKind) -> bool {
        self.allowed(k) && self.len(k) > 0
    }
}

/// Chooses which queue of a die to serve.
///
/// Called by the FIL, on the FIL core, whenever a die and its channel are both free and the
/// die has waiting transactions. The implementer returns a queue that is non-empty and allowed,
/// or `None` to leave the die idle for now (it will be asked again on the next event). It may
/// keep its own state (round-robin pointers, credits) but must not rely on being called at any
/// particular time, and must be deterministic: no clocks, no randomness of its own.
pub trait SchedPolicy {
    /// The queue to serve next on `die`.
    fn pick(&mut self, die: DieIdx, view: &QueueView<'_>) -> Option<QueueKind>;
}

/// Serves the first eligible queue in a fixed order. The default order is mapping before user
/// before GC, reads before writes before erases:
/// mapping-read, user-read, gc-read, mapping-write, user-write, gc-write, erase.
#[derive(Clone, Debug)]
pub struct PriorityPolicy {
    order: Vec<QueueKind>,
}

impl PriorityPolicy {
    /// A policy serving queues in `order` (every kind exactly once; validate configs first).
    pub fn new(order: Vec<QueueKind>) -> Self {
        PriorityPolicy { order }
    }
}

impl Default for PriorityPolicy {
    fn default() -> Self {
        PriorityPolicy::new(QueueKind::ALL.to_vec())
    }
}

impl SchedPolicy for PriorityPolicy {
    fn pick(&mut self, _die: DieIdx, view: &QueueView<'_>) -> Option<QueueKind> {
        self.order.iter().copied().find(|&k| view.eligible(k))
    }
}

/// Serves the eligible queue whose head arrived first (no priorities at all).
#[derive(Clone, Debug, Default)]
pub struct FifoPolicy;

impl SchedPolicy for FifoPolicy {
    fn pick(&mut self, _die: DieIdx, view: &QueueView<'_>) -> Option<QueueKind> {
        QueueKind::ALL
            .iter()
            .copied()
            .filter(|&k| view.allowed(k))
            .filter_map(|k| view.head_arrival(k).map(|t| (t, k.index())))
            .min()
            .map(|(_, i)| QueueKind::ALL[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fil::txn::{FlashRequest, Txn, TxnSource};
    use nand::PageIdx;

    /// Queues holding one transaction for each kind in `arrivals` (kind, arrival ns).
    fn queues(arrivals: &[(QueueKind, u64)]) -> DieQueues {
        let mut q = DieQueues::default();
        for &(k, at) in arrivals {
            let source = match k {
                QueueKind::MappingRead | QueueKind::MappingWrite => TxnSource::Mapping,
                QueueKind::GcRead | QueueKind::GcWrite => TxnSource::Gc,
                _ => TxnSource::User,
            };
            let mut req = FlashRequest::read(source, PageIdx(0));
            req.op = k.op();
            let mut t = Txn::new(req, 0, SimTime::ZERO);
            t.out.timing.queued = SimTime::from_nanos(at);
            q.push(k, Box::new(t));
        }
        q
    }

    #[test]
    fn priority_prefers_mapping_then_user_then_gc_reads_before_writes() {
        let mut p = PriorityPolicy::default();
        use QueueKind::*;
        let q = queues(&[(UserRead, 0), (GcRead, 0), (MappingWrite, 0), (UserWrite, 0), (Erase, 0)]);
        assert_eq!(p.pick(DieIdx(0), &QueueView { queues: &q, allowed: [true; 7] }), Some(UserRead));
        let q = queues(&[(UserWrite, 0), (GcWrite, 0), (Erase, 0)]);
        assert_eq!(p.pick(DieIdx(0), &QueueView { queues: &q, allowed: [true; 7] }), Some(UserWrite));
        let q = queues(&[(MappingRead, 0), (UserWrite, 0)]);
        let mut allowed = [true; 7];
        allowed[MappingRead.index()] = false;
        assert_eq!(
            p.pick(DieIdx(0), &QueueView { queues: &q, allowed }),
            Some(UserWrite),
            "disallowed queues are skipped"
        );
        let q = queues(&[]);
        assert_eq!(p.pick(DieIdx(0), &QueueView { queues: &q, allowed: [true; 7] }), None);
    }

    #[test]
    fn fifo_serves_the_oldest_head() {
        use QueueKind::*;
        let q = queues(&[(UserRead, 50), (UserWrite, 20), (Erase, 30)]);
        assert_eq!(
            FifoPolicy.pick(DieIdx(0), &QueueView { queues: &q, allowed: [true; 7] }),
            Some(UserWrite)
        );
    }
}
