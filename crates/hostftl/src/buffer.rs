//! A host write buffer (`write.buffer`, the from-scratch design's large host buffer): writes
//! complete once their units are in host memory; flusher threads on the host's background
//! core send them to the array in the order written, a super-page at a time when a whole one
//! is queued, and a writer waits only when the units not yet on flash fill the buffer.
//! Flushes and FUA writes drain it.

use std::rc::Rc;

use firmware::trace::Phases;
use nand::Lpn;

use crate::alloc::Target;
use crate::ftl::Inner;

impl Inner {
    /// Flusher threads: one per command slot of the array, enough to keep it busy.
    pub fn start_flushers(self: &Rc<Self>) {
        let n = self.geo.channels / self.cfg.array.channels_per_controller * self.cfg.array.slots;
        for k in 0..n {
            let me = self.clone();
            self.cx.spawn_daemon(
                self.gc_core,
                format!("buffer flusher {k}"),
                async move { me.flusher().await },
            );
        }
    }

    /// Waits while the data not yet on flash fills the buffer.
    pub async fn wait_for_buffer_room(&self) {
        let cap = self.cfg.write.buffer.bytes();
        while cap > 0 && self.pending.borrow().len() as u64 * self.geo.unit_bytes() as u64 >= cap {
            self.stats.borrow_mut().cache_full_waits += 1;
            self.programmed.notified().await;
        }
    }

    /// Queues stamped units for the flushers.
    pub fn buffer_units(&self, stamped: &[(Lpn, u64)], target: Target) {
        self.buffered.borrow_mut().extend(stamped.iter().map(|&(l, b)| (l, b, target)));
        self.buffer_work.notify_all();
    }

    /// Waits until the buffer is empty and no flusher is sending anything.
    pub async fn drain_buffer(&self) {
        while !self.buffered.borrow().is_empty() || self.flushing.get() > 0 {
            self.drained.notified().await;
        }
    }

    /// The next batch: queued units still current, of the head's target, at most a super-page.
    fn next_batch(&self) -> Option<(Vec<(Lpn, u64)>, Target)> {
        let mut q = self.buffered.borrow_mut();
        let pending = self.pending.borrow();
        let mut batch = Vec::new();
        let mut target = None;
        while let Some(&(lpn, born, t)) = q.front() {
            if batch.len() == self.super_page_units() || target.is_some_and(|x| x != t) {
                break;
            }
            q.pop_front();
            if pending.get(&lpn.0).is_some_and(|p| p.born == born) {
                batch.push((lpn, born));
                target = Some(t);
            }
        }
        target.map(|t| (batch, t))
    }

    async fn flusher(self: Rc<Self>) {
        loop {
            let Some((batch, target)) = self.next_batch() else {
                if self.flushing.get() == 0 {
                    self.drained.notify_all();
                }
                self.buffer_work.notified().await;
                continue;
            };
            self.flushing.set(self.flushing.get() + 1);
            let whole = batch.len() == self.super_page_units() && self.super_page_mode(batch.len());
            self.place(&batch, target, whole, false, &mut Phases::default()).await;
            self.flushing.set(self.flushing.get() - 1);
            if self.buffered.borrow().is_empty() && self.flushing.get() == 0 {
                self.drained.notify_all();
            }
        }
    }
}
