//! The locks of a lock-based firmware: one per shared table it guards, and optionally one per
//! cache line. Statistics are kept per class, one class per table and one for every line.

use std::rc::Rc;

use sim::Cx;
use sim::sync::{Lock, LockClass, LockCosts, LockKind, LockStats, LockTable};

use crate::flow::Table;

/// Table and line locks, and their classes for the report.
pub struct Locks {
    /// Indexed by `Table`: `None` for a table this firmware does not share.
    tables: [Option<Lock>; 3],
    lines: Option<LockTable<u32>>,
    classes: Vec<Rc<LockClass>>,
}

impl Locks {
    /// Locks on the tables `guarded` (waiting as `table` says), and on every cache line if
    /// `line` is given. Each table's class is reported whether or not it is guarded.
    pub fn new(
        cx: &Cx,
        guarded: &[Table],
        table: LockKind,
        line: Option<LockKind>,
        costs: LockCosts,
    ) -> Locks {
        let classes: Vec<Rc<LockClass>> =
            ["nvme queues", "cache index", "mapping table"].into_iter().map(LockClass::new).collect();
        let tables = [Table::Queues, Table::Index, Table::Mapping]
            .map(|t| guarded.contains(&t).then(|| Lock::new(cx, &classes[t as usize], table, costs)));
        let mut classes = classes;
        let lines = line.map(|kind| {
            let class = LockClass::new("cache line");
            classes.push(class.clone());
            LockTable::new(cx, &class, kind, costs)
        });
        Locks { tables, lines, classes }
    }

    /// `table`'s lock, if it is guarded.
    pub fn table(&self, table: Table) -> Option<&Lock> {
        self.tables[table as usize].as_ref()
    }

    /// The cache lines' locks, if lines are locked.
    pub fn lines(&self) -> Option<&LockTable<u32>> {
        self.lines.as_ref()
    }

    /// Each class's name and statistics.
    pub fn stats(&self) -> Vec<(String, LockStats)> {
        self.classes.iter().map(|c| (c.name().to_string(), c.stats())).collect()
    }
}
