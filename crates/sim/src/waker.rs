//! Wakers for tasks of a [`Sim`](crate::Sim).
//!
//! A waker carries no allocation: its data word packs (executor id, task generation, task slot).
//! Waking looks the executor up in a per-thread registry, so a waker is only meaningful on the
//! thread that created it — which is always the case, since a simulation is single-threaded and
//! nothing in it may reach another thread. A waker that outlives its simulation, or whose task
//! has finished, wakes nothing.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::task::{RawWaker, RawWakerVTable, Waker};

use crate::executor::Inner;
use crate::task::TaskKey;

thread_local! {
    /// Executors alive on this thread, indexed by executor id.
    static REGISTRY: RefCell<Vec<Weak<Inner>>> = const { RefCell::new(Vec::new()) };
    /// The executor whose run loop is on the stack, if any: most wakes come from its own
    /// tasks and timers, and reach it without a registry look-up.
    static RUNNING: Cell<(u16, *const Inner)> = const { Cell::new((u16::MAX, std::ptr::null())) };
}

/// Marks an executor as running on this thread for as long as the guard lives (nested runs
/// restore the outer one).
pub(crate) struct Running {
    outer: (u16, *const Inner),
}

impl Running {
    pub fn enter(inner: &Inner) -> Running {
        let outer = RUNNING.with(|r| r.replace((inner.exec_id(), inner as *const Inner)));
        Running { outer }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.with(|r| r.set(self.outer));
    }
}

/// Registers a new executor on this thread and returns its id.
///
/// # Panics
/// If 65,536 simulations are alive on one thread at once.
pub(crate) fn register(inner: &Rc<Inner>) -> u16 {
    REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        let weak = Rc::downgrade(inner);
        if let Some(i) = r.iter().position(|w| w.strong_count() == 0) {
            r[i] = weak;
            return i as u16;
        }
        assert!(r.len() < u16::MAX as usize, "too many live simulations on one thread");
        r.push(weak);
        (r.len() - 1) as u16
    })
}

fn pack(exec: u16, key: TaskKey) -> *const () {
    let word = ((exec as usize) << 48) | ((key.generation as usize) << 32) | key.slot as usize;
    std::ptr::without_provenance(word)
}

fn unpack(data: *const ()) -> (u16, TaskKey) {
    let word = data.addr();
    let key = TaskKey { slot: word as u32, generation: (word >> 32) as u16 };
    ((word >> 48) as u16, key)
}

/// The waker of task `key` in executor `exec`.
pub(crate) fn task_waker(exec: u16, key: TaskKey) -> Waker {
    const { assert!(usize::BITS == 64, "ssdlab-sim packs wakers into 64-bit words") };
    // SAFETY: the vtable functions below never dereference the data word; it is an integer.
    unsafe { Waker::from_raw(RawWaker::new(pack(exec, key), &VTABLE)) }
}

/// The task `waker` wakes, if it is a task waker of executor `exec` (not a foreign waker).
pub(crate) fn own_task(waker: &Waker, exec: u16) -> Option<TaskKey> {
    if !std::ptr::eq(waker.vtable(), &VTABLE) {
        return None;
    }
    let (e, key) = unpack(waker.data());
    (e == exec).then_some(key)
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake, drop);

fn clone(data: *const ()) -> RawWaker {
    RawWaker::new(data, &VTABLE)
}

fn wake(data: *const ()) {
    let (exec, key) = unpack(data);
    let (running, ptr) = RUNNING.with(Cell::get);
    if running == exec && !ptr.is_null() {
        // SAFETY: `RUNNING` holds a pointer only while a `Running` guard made from a live
        // `&Inner` is on this thread's stack (inside that executor's run loop), so the executor
        // is alive; wakers never leave their thread.
        unsafe { &*ptr }.wake(key);
        return;
    }
    let inner = REGISTRY.with(|r| r.borrow().get(exec as usize).and_then(Weak::upgrade));
    if let Some(inner) = inner {
        inner.wake(key);
    }
}

fn drop(_: *const ()) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trip() {
        let key = TaskKey { slot: 0xdead_beef, generation: 0x1234 };
        assert_eq!(unpack(pack(0xabcd, key)), (0xabcd, key));
    }
}
