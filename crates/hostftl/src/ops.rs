//! The FTL's operations as its block driver calls them.

use firmware::ftl::{MediaError, UnitData, UnitWrite};
use firmware::hil::Placement;
use firmware::trace::Phases;
use nand::Lpn;

use crate::alloc::Target;
use crate::error::PlacementError;
use crate::ftl::HostFtl;

/// What identifies a unit's current data (see `Inner::unit_version`).
type Version = (Option<u64>, Option<nand::UnitAddr>);

impl HostFtl {
    /// Where a write with the host's `placement` may go, if the array has that place.
    pub(crate) fn target(&self, placement: Option<Placement>) -> Result<Target, PlacementError> {
        let geo = &self.inner.geo;
        match placement {
            // The host FTL places by groups and dies; an FDP placement identifier says nothing
            // it can use (as a device without FDP ignores the directive).
            None | Some(Placement::Pid(_)) => Ok(Target::Any),
            Some(Placement::Group(g)) if g < self.inner.cfg.groups => Ok(Target::Group(g)),
            Some(Placement::Group(group)) => {
                Err(PlacementError::NoGroup { group, groups: self.inner.cfg.groups })
            }
            Some(Placement::Die(d)) if d < geo.total_dies() => Ok(Target::Die(d)),
            Some(Placement::Die(die)) => Err(PlacementError::NoDie { die, dies: geo.total_dies() }),
        }
    }

    /// Checks that the array has the place `placement` names.
    pub fn check_placement(&self, placement: Placement) -> Result<(), PlacementError> {
        self.target(Some(placement)).map(|_| ())
    }

    /// Reads units, in order (unwritten ones as zeroes). Adds the time spent to `ph`.
    pub async fn read(&self, lpns: &[Lpn], ph: &mut Phases) -> Vec<Result<UnitData, MediaError>> {
        self.inner.read_units(lpns, ph).await
    }

    /// Writes units of one host command where `placement` says (anywhere if `None`); with
    /// `fua`, returns once they are on flash. A partial unit is read and merged first. Adds
    /// the time spent to `ph`.
    pub async fn write(
        &self,
        writes: Vec<UnitWrite>,
        sector_bytes: u32,
        placement: Option<Placement>,
        fua: bool,
        ph: &mut Phases,
    ) -> Result<(), String> {
        let target = self.target(placement).map_err(|e| e.to_string())?;
        let i = &self.inner;
        let spu = i.geo.unit_bytes() / sector_bytes;
        // Partial units: the current data, read first and merged. Nothing may change any of
        // them between the reads and the write (which takes effect before its first await):
        // read again those that changed meanwhile.
        i.wait_for_buffer_room().await;
        let partial: Vec<usize> = (0..writes.len()).filter(|&k| writes[k].sectors < spu).collect();
        let mut olds: Vec<Option<(Version, UnitData)>> = vec![None; partial.len()];
        loop {
            for (o, &k) in olds.iter_mut().zip(&partial) {
                if o.is_none() {
                    let lpn = writes[k].lpn;
                    let before = i.unit_version(lpn);
                    i.stats.borrow_mut().rmw_reads += 1;
                    let old =
                        i.read_units(&[lpn], ph).await.pop().expect("one unit").map_err(|e| e.to_string())?;
                    *o = Some((before, old));
                }
            }
            let mut settled = true;
            for (o, &k) in olds.iter_mut().zip(&partial) {
                if o.as_ref().is_some_and(|(v, _)| *v != i.unit_version(writes[k].lpn)) {
                    *o = None;
                    settled = false;
                }
            }
            if settled {
                break;
            }
        }
        let mut olds = olds.into_iter();
        let units: Vec<_> = writes
            .into_iter()
            .map(|w| {
                if w.sectors == spu {
                    return (w.lpn, w.data);
                }
                let (_, mut old) = olds.next().flatten().expect("read and settled");
                old.merge(w.first_sector as usize, sector_bytes as usize, &w.data);
                (w.lpn, old)
            })
            .collect();
        i.writes.set(i.writes.get() + 1);
        i.write_units(units, target, fua, ph).await;
        i.writes.set(i.writes.get() - 1);
        Ok(())
    }

    /// Deallocates `lpn`: it reads as zeroes afterwards.
    pub fn trim(&self, lpn: Lpn) {
        self.inner.trim(lpn);
    }

    /// Writes every unit not yet on flash and waits until all are there.
    pub async fn flush(&self) {
        self.inner.flush().await;
    }
}
