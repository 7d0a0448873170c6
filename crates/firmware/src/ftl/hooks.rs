//! The FTL's side of the architecture's flow (`crate::flow`): the points where a request moves
//! to another core, and the locks around the shared tables. Where the architecture has no
//! route or no locks these make no future at all (the request path passes them several times
//! per unit).

use nand::Lpn;
use sim::SimDuration;

use crate::flow::{Occupied, Point, Table};
use crate::ftl::state::FtlInner;

impl FtlInner {
    /// The running request reaches `point` (see [`Flow::hop`](crate::flow::Flow::hop)).
    pub(crate) async fn enter(&self, point: Point, lpn: Option<Lpn>) {
        if let Some(hop) = self.flow.hop(point, lpn) {
            hop.await;
        }
    }

    /// Takes `table`'s lock, if the architecture has one; the time spent getting it.
    pub(crate) async fn lock(&self, table: Table, at: Point) -> SimDuration {
        if self.flow.has_locks() { self.flow.lock(table, at).await } else { SimDuration::ZERO }
    }

    /// Gives `table`'s lock back.
    pub(crate) fn unlock(&self, table: Table) {
        self.flow.unlock(table);
    }

    /// Takes `lpn`'s cache-line lock, if the architecture has line locks.
    pub(crate) async fn lock_line(&self, lpn: Lpn, at: Point) -> SimDuration {
        if self.flow.has_line_locks() { self.flow.lock_line(lpn, at).await } else { SimDuration::ZERO }
    }

    /// Gives `lpn`'s line lock back.
    pub(crate) fn unlock_line(&self, lpn: Lpn) {
        self.flow.unlock_line(lpn);
    }

    /// Whether a request waits for a busy line by taking its lock.
    pub(crate) fn line_locks(&self) -> bool {
        self.flow.has_line_locks()
    }

    /// What a read does about a line another request is filling.
    pub(crate) fn occupied(&self) -> Occupied {
        self.flow.occupied()
    }

    /// A request waited `d` for its cache line.
    pub(crate) fn waited_for_line(&self, d: SimDuration) {
        self.flow.waited_for_line(d);
    }
}
