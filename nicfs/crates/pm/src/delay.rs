//! Busy-wait delays used by the cost models (PM, DMA, weak cores).

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static MODELLED_NS: Cell<u64> = const { Cell::new(0) };
}

/// Total modelled delay (ns) this thread has spent in [`spin_for_ns`]. A CPU model (such as
/// the back end's weak cores) subtracts it so that waiting for a device is not mistaken for
/// computing.
pub fn modelled_wait_ns() -> u64 {
    MODELLED_NS.with(|c| c.get())
}

/// Waits `ns` nanoseconds of wall-clock time.
///
/// Short waits spin; longer ones yield the CPU between checks so that, on a machine with few
/// cores, the modelled delay does not starve the threads it is supposed to be waiting for.
pub fn spin_for_ns(ns: u64) {
    if ns == 0 {
        return;
    }
    MODELLED_NS.with(|c| c.set(c.get().wrapping_add(ns)));
    let deadline = Instant::now() + Duration::from_nanos(ns);
    if ns < 2_000 {
        while Instant::now() < deadline {
            std::hint::spin_loop();
        }
    } else {
        while Instant::now() < deadline {
            std::thread::yield_now();
        }
    }
}
