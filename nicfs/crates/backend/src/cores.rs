//! The NIC's weak cores: a fixed pool shared by all pipeline stages, each slower than a host
//! core by a configurable factor.

use std::sync::{Condvar, Mutex};
use std::time::Instant;

use nicfs_pm::{modelled_wait_ns, spin_for_ns};

/// A counting semaphore of NIC cores plus the slowdown model.
pub struct CorePool {
    free: Mutex<usize>,
    cv: Condvar,
    slowdown: f64,
}

impl CorePool {
    /// `cores` cores, each `slowdown` times slower than the host.
    pub fn new(cores: usize, slowdown: f64) -> CorePool {
        CorePool { free: Mutex::new(cores), cv: Condvar::new(), slowdown }
    }

    /// Runs `f` on a NIC core: waits for a free core, runs, then keeps the core busy for the
    /// extra time a slower core would have needed.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        {
            let mut g = self.free.lock().unwrap_or_else(|e| e.into_inner());
            while *g == 0 {
                g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
            *g -= 1;
        }
        let start = Instant::now();
        let waited = modelled_wait_ns();
        let r = f();
        // Only computing is slower on a weak core; modelled DMA/PM waits are not scaled.
        let wait = modelled_wait_ns().wrapping_sub(waited);
        let compute = (start.elapsed().as_nanos() as u64).saturating_sub(wait);
        spin_for_ns((compute as f64 * (self.slowdown - 1.0)) as u64);
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.cv.notify_one();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn never_more_than_n_at_once() {
        let pool = Arc::new(CorePool::new(2, 1.0));
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..6)
            .map(|_| {
                let (p, r, k) = (pool.clone(), running.clone(), peak.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        p.run(|| {
                            let n = r.fetch_add(1, Ordering::SeqCst) + 1;
                            k.fetch_max(n, Ordering::SeqCst);
                            std::thread::yield_now();
                            r.fetch_sub(1, Ordering::SeqCst);
                        });
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert!(peak.load(Ordering::SeqCst) <= 2);
    }
}
