//! A die's seven transaction queues, and multi-plane batching.

use std::collections::VecDeque;

use crate::fil::hw::TxnBatch;
use crate::fil::policy::QueueView;
use crate::fil::txn::{QueueKind, Txn};
use nand::Geometry;
use sim::SimTime;

/// The queues of one die.
#[derive(Default)]
pub(crate) struct DieQueues {
    q: [VecDeque<Box<Txn>>; 7],
    total: usize,
}

impl DieQueues {
    pub fn push(&mut self, kind: QueueKind, txn: Box<Txn>) {
        self.q[kind.index()].push_back(txn);
        self.total += 1;
    }

    pub fn total(&self) -> usize {
        self.total
    }

    pub fn view(&self, allowed: [bool; 7]) -> QueueView<'_> {
        QueueView { queues: self, allowed }
    }

    pub fn len(&self, k: QueueKind) -> usize {
        self.q[k.index()].len()
    }

    pub fn head_arrival(&self, k: QueueKind) -> Option<SimTime> {
        self.q[k.index()].front().map(|t| t.out.timing.queued)
    }

    /// Takes the head of `kind` and, if `multi_plane`, up to `planes - 1` partners from the
    /// same queue: same page offset, other planes. Only the first waiting transaction of each
    /// plane is eligible (looking at most `scan` entries deep), so transactions of one plane —
    /// and hence pages of one block — never overtake each other.
    pub fn take_batch(
        &mut self,
        kind: QueueKind,
        geo: &Geometry,
        multi_plane: bool,
        scan: usize,
    ) -> TxnBatch {
        let q = &mut self.q[kind.index()];
        let head = q.pop_front().expect("policy picked an empty queue");
        let mut batch = TxnBatch::new();
        let head_block = geo.block_of(head.req.page);
        let offset = geo.page_in_block(head.req.page);
        let mut seen = 1u32 << geo.plane_of(head_block);
        batch.push(head);
        if multi_plane && geo.planes > 1 {
            let mut i = 0;
            while i < q.len().min(scan) && batch.len() < geo.planes as usize {
                let plane = geo.plane_of(geo.block_of(q[i].req.page));
                let first_of_plane = seen & (1 << plane) == 0;
                seen |= 1 << plane;
                if first_of_plane && geo.page_in_block(q[i].req.page) == offset {
                    batch.push(q.remove(i).expect("index in range"));
                } else {
                    i += 1;
                }
            }
        }
        self.total -= batch.len();
        batch
    }
}
