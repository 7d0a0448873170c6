//! The report produced when a run can make no further progress: every foreground task is
//! waiting, and no timer is pending that could wake one. A deadlock is a firmware bug to be
//! shown, not a hang.

use std::fmt;

use serde::Serialize;

use crate::task::WaitOn;
use crate::time::SimTime;

/// A task that was waiting when the simulation deadlocked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockedTask {
    /// The task's name.
    pub name: String,
    /// The core it runs on (`unbound` for hardware and host tasks).
    pub core: String,
    /// Whether it is a daemon (a service loop that is allowed to wait forever).
    pub daemon: bool,
    /// What it waits for, e.g. `oneshot 'fil completion'`.
    pub waiting_on: String,
}

/// Every foreground task is waiting and no event is pending.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
pub struct Deadlock {
    /// Virtual time at which progress stopped.
    pub at: SimTime,
    /// Every live task and what it waits on.
    pub tasks: Vec<BlockedTask>,
}

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "deadlock at {}: every task is waiting and no event is pending", self.at)?;
        for t in &self.tasks {
            let kind = if t.daemon { "daemon" } else { "task" };
            write!(f, "\n  {kind} '{}' on core '{}' waits on {}", t.name, t.core, t.waiting_on)?;
        }
        Ok(())
    }
}

/// A human description of a wait (the mutex case with a holder name is filled in by the
/// executor, which can resolve task names).
pub(crate) fn describe(on: &WaitOn) -> String {
    match on {
        WaitOn::Runnable => "nothing (runnable)".into(),
        WaitOn::Core => "its core".into(),
        WaitOn::Sleep(t) => format!("a timer at {t}"),
        WaitOn::Compute(t) => format!("computation until {t}"),
        WaitOn::Oneshot(l) => format!("oneshot '{l}'"),
        WaitOn::Notify(l) => format!("notify '{l}'"),
        WaitOn::Mutex(l, _) => format!("mutex '{l}'"),
        WaitOn::RingPop(l) => format!("an item from ring '{l}'"),
        WaitOn::RingPush(l) => format!("space in ring '{l}'"),
        WaitOn::Join(l) => format!("task '{l}' to finish"),
        WaitOn::Other => "a future outside ssdlab-sim".into(),
    }
}
