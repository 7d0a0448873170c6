//! NVM sets: subsets of the array's planes that host data can be confined to.
//!
//! A set is a list of planes (global plane numbers, die by die). The HIL binds a set to a
//! submission queue when the queue is created (Create I/O Submission Queue's NVMSETID), and
//! every unit written through that queue carries the set in its placement ([`Placed`]) into
//! its cache line: write-back puts the unit only on the set's planes. GC moves data within
//! the victim's plane, so relocated data stays in its set; a fill that preconditions the
//! device places each logical unit in the set registered for its range
//! ([`Ftl::confine_fill`]). Reads go where the data is. Set 0 is the whole array (no
//! confinement): with no set defined nothing changes.
//!
//! [`Placed`]: crate::ftl::Placed

use std::ops::Range;

use nand::Lpn;

use crate::ftl::state::{Ftl, FtlInner};

/// Most NVM sets a device keeps (a cache line keeps the set in 8 bits; 0 is the whole array).
pub const MAX_SETS: usize = 255;

/// The NVM sets defined so far, and where a fill puts each logical range.
#[derive(Default)]
pub(crate) struct Sets {
    /// Per set (set `i + 1`): which planes it has, one flag per plane.
    planes: Vec<Vec<bool>>,
    /// Logical ranges a fill places in a set (later ranges win where they overlap).
    fill: Vec<(Range<u32>, u8)>,
}

impl Sets {
    /// Whether any set is defined.
    pub(crate) fn any(&self) -> bool {
        !self.planes.is_empty()
    }

    /// Whether `set` may take a page in `plane` (set 0 takes every plane).
    pub(crate) fn admits(&self, set: u8, plane: u32) -> bool {
        set == 0 || self.planes[set as usize - 1][plane as usize]
    }

    /// Whether a fill places any range in a set.
    pub(crate) fn has_fill(&self) -> bool {
        self.fill.iter().any(|&(_, s)| s != 0)
    }

    /// The set a fill places logical unit `lpn` in (0 if no range names it).
    pub(crate) fn fill_set(&self, lpn: Lpn) -> u8 {
        self.fill.iter().rev().find(|(r, _)| r.contains(&lpn.0)).map_or(0, |&(_, s)| s)
    }
}

impl Ftl {
    /// Defines an NVM set of `planes` (global plane numbers; order and repeats do not matter)
    /// and returns its id (1 and up); a set with the same planes as one defined before gets
    /// that one's id. Errors name the plane the array lacks, an empty set, or too many sets.
    pub fn define_set(&self, planes: &[u32]) -> Result<u8, String> {
        let total = self.inner.blocks.borrow().planes();
        if planes.is_empty() {
            return Err("an NVM set needs at least one plane".into());
        }
        if let Some(&p) = planes.iter().find(|&&p| p >= total) {
            return Err(format!(
                "plane {p} does not exist (the array has {total} planes, 0 to {})",
                total - 1
            ));
        }
        let mut mask = vec![false; total as usize];
        for &p in planes {
            mask[p as usize] = true;
        }
        let mut sets = self.inner.sets.borrow_mut();
        if let Some(i) = sets.planes.iter().position(|m| *m == mask) {
            return Ok(i as u8 + 1);
        }
        if sets.planes.len() >= MAX_SETS {
            return Err(format!("a device keeps at most {MAX_SETS} NVM sets"));
        }
        sets.planes.push(mask);
        Ok(sets.planes.len() as u8)
    }

    /// Whether NVM set `set` exists (0, the whole array, always does).
    pub fn has_set(&self, set: u8) -> bool {
        set as usize <= self.inner.sets.borrow().planes.len()
    }

    /// The planes of NVM set `set` (every plane for set 0), or `None` if it does not exist.
    pub fn set_planes(&self, set: u8) -> Option<Vec<u32>> {
        let sets = self.inner.sets.borrow();
        let total = self.inner.blocks.borrow().planes();
        (set as usize <= sets.planes.len()).then(|| (0..total).filter(|&p| sets.admits(set, p)).collect())
    }

    /// Makes a precondition's fill place the logical units `range` in NVM set `set` (which must
    /// exist): the data a confined flow reads is then on its planes from the start.
    pub fn confine_fill(&self, range: Range<Lpn>, set: u8) {
        assert!(self.has_set(set), "NVM set {set} is not defined");
        self.inner.sets.borrow_mut().fill.push((range.start.0..range.end.0, set));
    }
}

impl FtlInner {
    /// Whether NVM set `set` may take a page in `plane`.
    pub(crate) fn set_admits(&self, set: u8, plane: u32) -> bool {
        set == 0 || self.sets.borrow().admits(set, plane)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_admit_their_planes_and_fills_follow_ranges() {
        let mut s = Sets::default();
        assert!(!s.any() && s.admits(0, 5));
        s.planes.push(vec![true, false, true, false]);
        assert!(s.any());
        assert!(s.admits(1, 0) && !s.admits(1, 1) && s.admits(1, 2) && !s.admits(1, 3));
        s.fill.push((0..10, 1));
        assert_eq!(s.fill_set(Lpn(3)), 1);
        assert_eq!(s.fill_set(Lpn(10)), 0);
    }
}
