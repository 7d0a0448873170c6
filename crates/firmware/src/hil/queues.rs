//! Queue pairs: the submission queue the host fills and the controller fetches from, the
//! worker inbox fetched commands wait in, and the completion queue with interrupt coalescing.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use sim::sync::{Notify, Ring, RingSpec, oneshot};
use sim::{Cx, SimDuration, SimTime};

use crate::hil::nvme::{NvmeCommand, NvmeCompletion};

/// Submission-queue priority class (weighted round robin arbitration).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Served before every other class.
    Urgent,
    /// Weighted: high.
    High,
    /// Weighted: medium.
    #[default]
    Medium,
    /// Weighted: low.
    Low,
}

/// A command in flight inside the controller.
pub struct Entry {
    /// The controller's number for the command.
    pub id: u64,
    pub cmd: NvmeCommand,
    pub reply: oneshot::Sender<NvmeCompletion>,
    pub submitted: SimTime,
    pub fetch_start: SimTime,
    /// When the fetcher handed it to the queue's workers.
    pub fetched: SimTime,
}

/// What a worker receives.
pub enum Work {
    /// A fetched command.
    Cmd(Entry),
    /// A fetched command and the queue pair it came from (workers that serve every queue).
    Routed(Rc<QueuePair>, Entry),
    /// The queue was deleted: exit.
    Stop,
}

/// One I/O queue pair.
pub struct QueuePair {
    pub depth: u32,
    pub priority: Priority,
    /// The NVM set the submission queue is bound to (0: none).
    pub nvm_set: u16,
    /// Commands whose doorbell has reached the controller, not yet fetched.
    pub sq: RefCell<VecDeque<Entry>>,
    /// Commands the host has submitted and not yet seen complete.
    pub outstanding: Cell<u32>,
    /// Commands fetched and not yet completed (bounded by `queue_fetch_size`).
    pub in_device: Cell<u32>,
    /// Wakes a host waiting for a free submission slot.
    pub slot_free: Notify,
    /// Fetched commands waiting for a worker.
    pub inbox: Ring<Work>,
    pub deleted: Cell<bool>,
    /// Completions waiting for a coalesced interrupt.
    pending: RefCell<Vec<(oneshot::Sender<NvmeCompletion>, NvmeCompletion, SimTime)>>,
    timer_armed: Cell<bool>,
}

impl QueuePair {
    pub fn new(cx: &Cx, id: u16, depth: u32, priority: Priority) -> Self {
        QueuePair {
            depth,
            priority,
            nvm_set: 0,
            sq: RefCell::new(VecDeque::new()),
            outstanding: Cell::new(0),
            in_device: Cell::new(0),
            slot_free: Notify::new(cx, format!("sq{id} slot")),
            inbox: Ring::new(
                cx,
                format!("sq{id} inbox"),
                RingSpec { capacity: depth as usize + 1, ..RingSpec::default() },
            ),
            deleted: Cell::new(false),
            pending: RefCell::new(Vec::new()),
            timer_armed: Cell::new(false),
        }
    }
}

/// Interrupt settings of the completion path.
#[derive(Copy, Clone)]
pub struct Interrupts {
    pub coalesce_count: u32,
    pub coalesce_time: SimDuration,
    /// Interrupt message plus host handling.
    pub latency: SimDuration,
}

/// Posts a completion entry (already written to host memory at `posted`) and raises, or
/// coalesces, its interrupt. Each completion reaches the host `latency` after its interrupt.
pub fn post(
    cx: &Cx,
    q: &Rc<QueuePair>,
    irq: Interrupts,
    reply: oneshot::Sender<NvmeCompletion>,
    c: NvmeCompletion,
) {
    let now = cx.now();
    if irq.coalesce_count <= 1 && irq.coalesce_time.is_zero() {
        deliver(irq.latency, reply, c, now, now);
        return;
    }
    q.pending.borrow_mut().push((reply, c, now));
    if q.pending.borrow().len() as u32 >= irq.coalesce_count {
        fire(cx, q, irq);
    } else if !q.timer_armed.get() && !irq.coalesce_time.is_zero() {
        q.timer_armed.set(true);
        let (c2, q2) = (cx.clone(), q.clone());
        cx.spawn_daemon(sim::CoreId::UNBOUND, "interrupt timer", async move {
            c2.sleep(irq.coalesce_time).await;
            q2.timer_armed.set(false);
            fire(&c2, &q2, irq);
        });
    }
}

fn fire(cx: &Cx, q: &QueuePair, irq: Interrupts) {
    let now = cx.now();
    let pending = std::mem::take(&mut *q.pending.borrow_mut());
    for (reply, c, posted) in pending {
        deliver(irq.latency, reply, c, posted, now);
    }
}

/// Hands a completion to the host `latency` after its interrupt at `irq_at` (now).
fn deliver(
    latency: SimDuration,
    reply: oneshot::Sender<NvmeCompletion>,
    mut c: NvmeCompletion,
    posted: SimTime,
    irq_at: SimTime,
) {
    c.phases.completion += irq_at.since(posted) + latency;
    c.timing.completed = irq_at + latency;
    reply.send_after(c, latency);
}
