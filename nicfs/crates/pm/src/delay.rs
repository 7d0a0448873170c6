//! Modelled delays used by the cost models (PM, DMA, weak cores).
//!
//! A modelled cost is *debt* charged to the calling thread. Debt is paid by sleeping once it
//! reaches [`PAY_THRESHOLD_NS`], so a thread is delayed by the modelled total without burning
//! a host core while it waits (this machine has two cores shared by front ends, the back end
//! and its stages; spinning for every microsecond of modelled latency would steal them).
//! Throughput follows the model; individual operation latencies are paid in lumps.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Debt is paid (by sleeping) once it reaches this many ns.
pub const PAY_THRESHOLD_NS: i64 = 200_000;

thread_local! {
    static MODELLED_NS: Cell<u64> = const { Cell::new(0) };
    static DEBT_NS: Cell<i64> = const { Cell::new(0) };
    static SLACK_SET: Cell<bool> = const { Cell::new(false) };
}

/// Total modelled delay (ns) this thread has been charged through [`spin_for_ns`]. A CPU
/// model (such as the back end's weak cores) subtracts it so that waiting for a device is
/// not mistaken for computing.
pub fn modelled_wait_ns() -> u64 {
    MODELLED_NS.with(|c| c.get())
}

fn tight_timer_slack() {
    if !SLACK_SET.with(|s| s.replace(true)) {
        #[cfg(target_os = "linux")]
        // SAFETY: PR_SET_TIMERSLACK only changes this thread's timer slack.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64);
        }
    }
}

/// Charges `ns` nanoseconds of modelled delay to the calling thread.
pub fn spin_for_ns(ns: u64) {
    if ns == 0 {
        return;
    }
    MODELLED_NS.with(|c| c.set(c.get().wrapping_add(ns)));
    let debt = DEBT_NS.with(|d| {
        let v = d.get().saturating_add(ns as i64);
        d.set(v);
        v
    });
    if debt >= PAY_THRESHOLD_NS {
        pay(debt);
    }
}

/// Pays all outstanding debt now (e.g. before reporting a measurement).
pub fn settle_delay() {
    let debt = DEBT_NS.with(|d| d.get());
    if debt > 0 {
        pay(debt);
    }
}

fn pay(debt: i64) {
    tight_timer_slack();
    let start = Instant::now();
    std::thread::sleep(Duration::from_nanos(debt as u64));
    let slept = start.elapsed().as_nanos() as i64;
    // Oversleeping becomes credit (bounded), so the long-run total matches the model.
    DEBT_NS.with(|d| d.set((d.get() - slept).max(-PAY_THRESHOLD_NS)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_accumulate_and_are_paid() {
        let before = modelled_wait_ns();
        for _ in 0..10 {
            spin_for_ns(50_000);
        }
        settle_delay();
        assert_eq!(modelled_wait_ns() - before, 500_000);
        assert!(DEBT_NS.with(|d| d.get()) <= 0);
    }
}
