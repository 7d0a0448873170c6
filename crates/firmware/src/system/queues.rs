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
    pub fn create(&self, qid: u16) -> Result<(), QueueError> {
        let mut q = self.made.borrow_mut();
        let n = q.len() - 1;
        match q.get_mut(qid as usize) {
            Some(made) if qid >= 1 && !*made => {
                *made = true;
                Ok(())
            }
            Some(_) if qid >= 1 => Err(QueueError::Exists(qid)),
            _ => Err(QueueError::NoSuchQueue { qid, queues: n }),
        }
    }
}

/// Why an I/O queue pair could not be created.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueueError {
    /// The front has no queue of that id.
    #[error("queue {qid} does not exist (1 to {queues})")]
    NoSuchQueue {
        /// The id asked for.
        qid: u16,
        /// Queues the front has (1 to this).
        queues: usize,
    },
    /// It was created already.
    #[error("queue {0} already exists")]
    Exists(u16),
    /// The NVMe controller failed the Create I/O Queue command.
    #[error("the controller failed the command: {0:?}")]
    Refused(crate::hil::Status),
    /// The system has no NVMe controller to take a queue's priority class or NVM set.
    #[error("{0}")]
    Unsupported(String),
}
