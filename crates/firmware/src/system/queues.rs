//! The I/O queues a front other than the NVMe controller exposes: which exist.

use std::cell::RefCell;

/// Queue ids 1..=n, each created at most once.
pub struct QueueSet {
    made: RefCell<Vec<bool>>,
}

impl QueueSet {
    /// Queues 1..=`n`, none created yet.
    pub fn new(n: u32) -> QueueSet {
        QueueSet { made: RefCell::new(vec![false; n as usize + 1]) }
    }

    /// Whether queue `qid` exists.
    pub fn has(&self, qid: u16) -> bool {
        qid >= 1 && self.made.borrow().get(qid as usize).copied().unwrap_or(false)
    }

    /// Creates queue `qid`; the error says why not.
    pub fn create(&self, qid: u16) -> Result<(), String> {
        let mut q = self.made.borrow_mut();
        let n = q.len() - 1;
        match q.get_mut(qid as usize) {
            Some(made) if qid >= 1 && !*made => {
                *made = true;
                Ok(())
            }
            Some(_) if qid >= 1 => Err(format!("queue {qid} already exists")),
            _ => Err(format!("queue {qid} does not exist (1 to {n})")),
        }
    }
}
