//! Where a coroutine waits for something in transition: a cache line being filled or written
//! back, a CMT segment being loaded, a translation page being rewritten, free blocks, free
//! cache lines, or a block's reads to drain. Wait queues are created on demand and dropped when
//! notified.

use std::cell::RefCell;
use std::rc::Rc;

use nand::{BlockIdx, Lpn};

use crate::ftl::blocks::Stream;
use rustc_hash::FxHashMap;
use sim::Cx;
use sim::sync::Notify;

/// What is being waited for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WaitKey {
    /// A cache line leaving `Filling` or `Writing`.
    Line(Lpn),
    /// A CMT segment being loaded.
    Segment(u32),
    /// A translation page being rewritten.
    Tpage(u32),
    /// A plane gaining room for a page of this stream (host data or translation pages, which
    /// go to any plane that has room).
    Room(Stream),
    /// A free block in this plane (GC, which stays in its victim's plane).
    PlaneRoom(u32),
    /// The reads pinning a block finishing.
    Unpinned(BlockIdx),
}

/// The wait queues.
pub struct Waits {
    cx: Cx,
    queues: RefCell<FxHashMap<WaitKey, Rc<Notify>>>,
}

impl Waits {
    /// An empty table.
    pub fn new(cx: &Cx) -> Self {
        Waits { cx: cx.clone(), queues: RefCell::new(FxHashMap::default()) }
    }

    /// Waits until `key` is notified. Check the condition first, without awaiting in between.
    pub async fn wait(&self, key: WaitKey) {
        let n = {
            let mut q = self.queues.borrow_mut();
            q.entry(key).or_insert_with(|| Rc::new(Notify::new(&self.cx, format!("{key:?}")))).clone()
        };
        n.notified().await;
    }

    /// Wakes the task that has waited longest on `key`, if any (no permit is kept for a later
    /// one).
    pub fn notify_one(&self, key: WaitKey) {
        if let Some(n) = self.queues.borrow().get(&key).filter(|n| n.waiters() > 0) {
            n.notify_one();
        }
    }

    /// Wakes everyone waiting on `key`.
    pub fn notify(&self, key: WaitKey) {
        let n = self.queues.borrow_mut().remove(&key);
        if let Some(n) = n {
            n.notify_all();
        }
    }
}
