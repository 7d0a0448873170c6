//! The FTL's side of an architecture's flow (`arch::flow`): the points where a request moves
//! to another core, and the locks around the shared tables. Without a flow these do nothing.

use nand::Lpn;
use sim::SimDuration;

use crate::arch::flow::{Occupied, Point, Table};
use crate::ftl::state::FtlInner;

impl FtlInner {
    /// The running request reaches `point` (see `Flow::enter`).
    pub(crate) async fn enter(&self, point: Point, lpn: Option<Lpn>) {
        if let Some(f) = self.flow.get() {
            if f.migrates() {
                f.enter(point, lpn).await;
            } else {
                f.set_role(point); // nothing moves: no future to await
            }
        }
    }

    /// Takes `table`'s lock, if the architecture has one; the time spent getting it.
    pub(crate) async fn lock(&self, table: Table, at: Point) -> SimDuration {
        match self.flow.get() {
            Some(f) if f.has_locks() => f.lock(table, at).await,
            _ => SimDuration::ZERO,
        }
    }

    /// Gives `table`'s lock back.
    pub(crate) fn unlock(&self, table: Table) {
        if let Some(f) = self.flow.get() {
            f.unlock(table);
        }
    }

    /// Takes `lpn`'s cache-line lock, if the architecture has line locks.
    pub(crate) async fn lock_line(&self, lpn: Lpn, at: Point) -> SimDuration {
        match self.flow.get() {
            Some(f) if f.has_line_locks() => f.lock_line(lpn, at).await,
            _ => SimDuration::ZERO,
        }
    }

    /// Gives `lpn`'s line lock back.
    pub(crate) fn unlock_line(&self, lpn: Lpn) {
        if let Some(f) = self.flow.get() {
            f.unlock_line(lpn);
        }
    }

    /// Whether a request waits for a busy line by taking its lock (Tradition-N).
    pub(crate) fn line_locks(&self) -> bool {
        self.flow.get().is_some_and(|f| f.has_line_locks())
    }

    /// What a read does about a line another request is filling.
    pub(crate) fn occupied(&self) -> Occupied {
        self.flow.get().map_or(Occupied::Wait, |f| f.occupied())
    }

    /// A request waited `d` for its cache line.
    pub(crate) fn waited_for_line(&self, d: SimDuration) {
        if let Some(f) = self.flow.get() {
            f.waited_for_line(d);
        }
    }
}
