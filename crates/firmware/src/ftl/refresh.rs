//! Data refresh (scrubbing): at an interval of virtual time (`ftl.refresh.interval`) the FTL
//! looks at every closed block and queues for its plane's GC those whose worst page, read now,
//! would have `ftl.refresh.threshold` x t bit errors per codeword or more (the error model's
//! RBER for the block's P/E cycles, retention since its first program and reads since its
//! erase). GC moves their data into fresh pages and erases them, before any other victim.
//!
//! Only under the ECC's error model; the scan is a daemon, so an idle device that is otherwise
//! at rest does not keep a run going, and time passing with nothing else to do costs one wake-up
//! per interval.

use nand::BlockIdx;

use crate::ftl::blocks::BlockUse;
use crate::ftl::state::FtlInner;

impl FtlInner {
    /// Starts the refresh daemon if the error model is on and refresh is configured.
    pub(crate) fn start_refresh(&self) {
        let interval = self.cfg.refresh.interval;
        let Some(ecc) = &self.ecc else { return };
        // A zoned namespace has no GC to rewrite what a scan would find.
        if interval.is_zero() || !ecc.models_errors() || self.zoned.is_some() {
            return;
        }
        let me = self.self_rc();
        self.cx.spawn_daemon(self.core, "refresh", async move {
            loop {
                me.cx.sleep(interval).await;
                me.refresh_scan();
            }
        });
    }

    /// Queues every closed block due for refresh and starts GC where one is ready.
    fn refresh_scan(&self) {
        let ecc = self.ecc.as_ref().expect("refresh runs under the error model");
        let limit = self.cfg.refresh.threshold * ecc.correctable() as f64;
        let due: Vec<BlockIdx> = {
            let (array, blocks) = (self.fil.array().borrow(), self.blocks.borrow());
            (0..self.geo.total_blocks())
                .map(BlockIdx)
                .filter(|&b| {
                    let i = blocks.info(b);
                    i.usage == BlockUse::Closed && !i.retiring && !i.refreshing
                })
                .filter(|&b| {
                    let errors =
                        ecc.expected_worst(b, array.block(b).erase_count, array.reads_since_erase(b));
                    errors.is_some_and(|e| e >= limit)
                })
                .collect()
        };
        self.stats.borrow_mut().media.refresh_scans += 1;
        let mut planes = Vec::new();
        for b in due {
            let plane = {
                let mut blocks = self.blocks.borrow_mut();
                blocks.mark_refreshing(b);
                blocks.plane_of(b)
            };
            self.bad.queue.borrow_mut()[plane as usize].push(b);
            planes.push(plane);
        }
        planes.dedup();
        for p in planes {
            self.kick_relocation(p);
        }
    }
}
