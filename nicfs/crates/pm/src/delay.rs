//! Busy-wait delays used by the cost models (PM, DMA, weak cores).

use std::time::{Duration, Instant};

/// Waits `ns` nanoseconds of wall-clock time.
///
/// Short waits spin; longer ones yield the CPU between checks so that, on a machine with few
/// cores, the modelled delay does not starve the threads it is supposed to be waiting for.
pub fn spin_for_ns(ns: u64) {
    if ns == 0 {
        return;
    }
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
