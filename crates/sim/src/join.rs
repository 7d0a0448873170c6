//! Awaiting several futures at once from one task (a request waiting on all its sub-requests'
//! flash reads, say).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Future of [`join_all`].
#[must_use = "join_all does nothing unless awaited"]
pub struct JoinAll<F: Future> {
    futures: Vec<Option<Pin<Box<F>>>>,
    outputs: Vec<Option<F::Output>>,
    pending: usize,
}

/// Runs every future concurrently within the calling task and returns their outputs in order.
/// Each wake polls the futures that have not finished yet.
pub fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> JoinAll<F> {
    let futures: Vec<_> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let n = futures.len();
    JoinAll { futures, outputs: (0..n).map(|_| None).collect(), pending: n }
}

// The futures are pinned in their own boxes and outputs are never pinned, so moving a JoinAll
// is fine.
impl<F: Future> Unpin for JoinAll<F> {}

impl<F: Future> Future for JoinAll<F> {
    type Output = Vec<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<F::Output>> {
        let this = &mut *self;
        for (slot, out) in this.futures.iter_mut().zip(this.outputs.iter_mut()) {
            if let Some(f) = slot
                && let Poll::Ready(v) = f.as_mut().poll(cx)
            {
                *out = Some(v);
                *slot = None;
                this.pending -= 1;
            }
        }
        if this.pending > 0 {
            return Poll::Pending;
        }
        Poll::Ready(this.outputs.iter_mut().map(|o| o.take().expect("every future finished")).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sim, SimDuration};

    #[test]
    fn outputs_in_order_and_concurrently() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let c = cx.clone();
        let (out, at) = sim
            .block_on(async move {
                let futs = [30u64, 10, 20].map(|d| {
                    let c = c.clone();
                    async move {
                        c.sleep(SimDuration::from_nanos(d)).await;
                        d
                    }
                });
                (join_all(futs).await, c.now().as_nanos())
            })
            .unwrap();
        assert_eq!(out, vec![30, 10, 20]);
        assert_eq!(at, 30, "the sleeps overlap");
    }
}
