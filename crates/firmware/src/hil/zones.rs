//! The zone state machine of the NVMe Zoned Namespace Command Set (revision 1.1, section 2.1
//! "Zoned Namespaces", figure "Zone State Machine"): each zone's state and write pointer, the
//! open and active resources, and the checks and transitions of writes, Zone Append and the
//! Zone Management Send actions, with the status codes the specification gives for each
//! refusal. Pure bookkeeping in logical blocks: no time, no flash (see `io.rs` for those).

use std::collections::VecDeque;

use crate::hil::nvme::{Status, ZoneAction, ZoneDescriptor, ZoneFilter, ZoneState};

/// One zone: its state and how many blocks are written from its start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Zone {
    /// State.
    pub state: ZoneState,
    /// Blocks written from the zone's start (the write pointer's offset).
    pub written: u64,
}

/// What a Zone Management Send did to one zone (the flash work it calls for).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing on flash (a state change only).
    None,
    /// The zone was reset: its data is deallocated and its blocks erased.
    Reset {
        /// Zone.
        zone: u32,
        /// Blocks written when it was reset.
        written: u64,
    },
    /// The zone was finished: the rest of its capacity is padded.
    Finish {
        /// Zone.
        zone: u32,
        /// Blocks written when it was finished.
        from: u64,
    },
}

/// Every zone of a namespace and its open and active resources.
#[derive(Clone, Debug)]
pub struct Zones {
    /// Zone size: the distance between zone starts, blocks.
    pub size: u64,
    /// Zone capacity: blocks writable from a zone's start.
    pub capacity: u64,
    /// Maximum open resources (0: no limit).
    pub max_open: u32,
    /// Maximum active resources (0: no limit).
    pub max_active: u32,
    zones: Vec<Zone>,
    /// Implicitly opened zones, least recently opened first (the ones the controller may
    /// close to open another).
    implicit: VecDeque<u32>,
    open: u32,
    active: u32,
}

impl Zones {
    /// `count` empty zones of `size` blocks each, `capacity` of them writable.
    pub fn new(count: u32, size: u64, capacity: u64, max_open: u32, max_active: u32) -> Zones {
        debug_assert!(capacity <= size && capacity > 0);
        Zones {
            size,
            capacity,
            max_open,
            max_active,
            zones: vec![Zone { state: ZoneState::Empty, written: 0 }; count as usize],
            implicit: VecDeque::new(),
            open: 0,
            active: 0,
        }
    }

    /// Zones.
    pub fn count(&self) -> u32 {
        self.zones.len() as u32
    }

    /// Zone `z`.
    pub fn zone(&self, z: u32) -> Zone {
        self.zones[z as usize]
    }

    /// The zone holding block `lba`.
    pub fn zone_of(&self, lba: u64) -> u32 {
        (lba / self.size) as u32
    }

    /// First block of zone `z`.
    pub fn start(&self, z: u32) -> u64 {
        z as u64 * self.size
    }

    /// Open resources in use.
    pub fn open_count(&self) -> u32 {
        self.open
    }

    /// Active resources in use.
    pub fn active_count(&self) -> u32 {
        self.active
    }

    /// Zones in each state, in [`ZoneState`] order (empty, implicitly opened, explicitly
    /// opened, closed, read-only, full, offline).
    pub fn census(&self) -> [u64; 7] {
        let mut n = [0u64; 7];
        for z in &self.zones {
            n[state_index(z.state)] += 1;
        }
        n
    }

    fn set(&mut self, z: u32, state: ZoneState) {
        let old = self.zones[z as usize].state;
        if old == state {
            return;
        }
        if old.is_open() {
            self.open -= 1;
        }
        if old.is_active() {
            self.active -= 1;
        }
        if old == ZoneState::ImplicitlyOpened {
            self.implicit.retain(|&i| i != z);
        }
        if state.is_open() {
            self.open += 1;
        }
        if state.is_active() {
            self.active += 1;
        }
        if state == ZoneState::ImplicitlyOpened {
            self.implicit.push_back(z);
        }
        self.zones[z as usize].state = state;
    }

    /// Makes room for zone `z` (in `from`) to become open: checks the active limit (an empty
    /// zone needs an active resource) and the open limit, closing the least recently
    /// implicitly opened zone if that frees an open resource (the specification lets the
    /// controller do so). Returns the zone it closed, if any.
    fn make_open_room(&mut self, z: u32, from: ZoneState) -> Result<Option<u32>, Status> {
        if from.is_open() {
            return Ok(None);
        }
        if from == ZoneState::Empty && self.max_active > 0 && self.active >= self.max_active {
            return Err(Status::TooManyActiveZones);
        }
        if self.max_open == 0 || self.open < self.max_open {
            return Ok(None);
        }
        let Some(&victim) = self.implicit.front() else { return Err(Status::TooManyOpenZones) };
        debug_assert_ne!(victim, z);
        self.set(victim, ZoneState::Closed);
        Ok(Some(victim))
    }

    /// Checks a write of `nlb` blocks at `slba` (the caller checked the namespace's range):
    /// it must be at its zone's write pointer, within the zone's capacity, to a zone that can
    /// take writes (opening it implicitly if it needs to).
    pub fn check_write(&self, slba: u64, nlb: u64) -> Result<u32, Status> {
        let z = self.zone_of(slba);
        let zone = self.zone(z);
        writable(zone.state)?;
        if slba != self.start(z) + zone.written {
            return Err(Status::ZoneInvalidWrite);
        }
        if zone.written + nlb > self.capacity {
            return Err(Status::ZoneBoundaryError);
        }
        Ok(z)
    }

    /// Takes a write of `nlb` blocks at `slba` (checked by [`check_write`](Self::check_write)
    /// or reserved by [`append`](Self::append)): opens the zone implicitly if needed and
    /// moves its write pointer; a zone written to its capacity becomes full.
    pub fn write(&mut self, slba: u64, nlb: u64) -> Result<u32, Status> {
        let z = self.check_write(slba, nlb)?;
        self.open_for_write(z)?;
        self.advance(z, nlb);
        Ok(z)
    }

    /// Opens zone `z` for a write, implicitly if it is not open.
    fn open_for_write(&mut self, z: u32) -> Result<(), Status> {
        let state = self.zone(z).state;
        if !state.is_open() {
            self.make_open_room(z, state)?;
            self.set(z, ZoneState::ImplicitlyOpened);
        }
        Ok(())
    }

    fn advance(&mut self, z: u32, nlb: u64) {
        let zone = &mut self.zones[z as usize];
        zone.written += nlb;
        if zone.written == self.capacity {
            self.set(z, ZoneState::Full);
        }
    }

    /// A Zone Append of `nlb` blocks to the zone starting at `zslba`: the block it is written
    /// at (the write pointer), which moves past it.
    pub fn append(&mut self, zslba: u64, nlb: u64) -> Result<u64, Status> {
        let z = self.check_append(zslba, nlb)?;
        let at = zslba + self.zone(z).written;
        self.open_for_write(z)?;
        self.advance(z, nlb);
        Ok(at)
    }

    /// Checks a Zone Append of `nlb` blocks to the zone starting at `zslba`; returns the zone.
    pub fn check_append(&self, zslba: u64, nlb: u64) -> Result<u32, Status> {
        if !zslba.is_multiple_of(self.size) {
            return Err(Status::InvalidField(format!("zone append at block {zslba}, not a zone's start")));
        }
        let z = self.zone_of(zslba);
        let zone = self.zone(z);
        writable(zone.state)?;
        if zone.written + nlb > self.capacity {
            return Err(Status::ZoneBoundaryError);
        }
        Ok(z)
    }

    /// Checks a read of `nlb` blocks at `slba`: an offline zone cannot be read; across zone
    /// boundaries only if `across` (the namespace's Read Across Zone Boundaries).
    pub fn check_read(&self, slba: u64, nlb: u64, across: bool) -> Result<(), Status> {
        let (first, last) = (self.zone_of(slba), self.zone_of(slba + nlb - 1));
        if first != last && !across {
            return Err(Status::ZoneBoundaryError);
        }
        match (first..=last).any(|z| self.zone(z).state == ZoneState::Offline) {
            true => Err(Status::ZoneIsOffline),
            false => Ok(()),
        }
    }

    /// Zone Management Send: `action` on the zone starting at `zslba`, or with `all` on every
    /// zone in a state it applies to. Returns what flash work each zone changed needs.
    pub fn send(&mut self, zslba: u64, action: ZoneAction, all: bool) -> Result<Vec<Effect>, Status> {
        if all {
            let applies = |s: ZoneState| match action {
                ZoneAction::Close => s.is_open(),
                ZoneAction::Finish => s.is_active(),
                ZoneAction::Open => s == ZoneState::Closed,
                ZoneAction::Reset => s.is_active() || s == ZoneState::Full,
                ZoneAction::Offline => s == ZoneState::ReadOnly,
            };
            let chosen: Vec<u32> = (0..self.count()).filter(|&z| applies(self.zone(z).state)).collect();
            if action == ZoneAction::Open {
                // Open all: every closed zone needs an open resource, or none is opened.
                let free_open = if self.max_open == 0 { u32::MAX } else { self.max_open - self.open };
                if chosen.len() as u64 > free_open as u64 + self.implicit.len() as u64 {
                    return Err(Status::TooManyOpenZones);
                }
            }
            let mut effects = Vec::with_capacity(chosen.len());
            for z in chosen {
                effects.push(self.act(z, action)?);
            }
            return Ok(effects);
        }
        if !zslba.is_multiple_of(self.size) {
            return Err(Status::InvalidField(format!("block {zslba} is not a zone's start")));
        }
        Ok(vec![self.act(self.zone_of(zslba), action)?])
    }

    fn act(&mut self, z: u32, action: ZoneAction) -> Result<Effect, Status> {
        use ZoneState as S;
        let state = self.zone(z).state;
        let bad = Err(Status::InvalidZoneStateTransition);
        match action {
            ZoneAction::Open => match state {
                S::ExplicitlyOpened => Ok(Effect::None),
                S::Empty | S::ImplicitlyOpened | S::Closed => {
                    self.make_open_room(z, state)?;
                    self.set(z, S::ExplicitlyOpened);
                    Ok(Effect::None)
                }
                _ => bad,
            },
            ZoneAction::Close => match state {
                S::Closed => Ok(Effect::None),
                S::ImplicitlyOpened | S::ExplicitlyOpened => {
                    // A zone with nothing written closes to empty.
                    let to = if self.zone(z).written == 0 { S::Empty } else { S::Closed };
                    self.set(z, to);
                    Ok(Effect::None)
                }
                _ => bad,
            },
            ZoneAction::Finish => match state {
                S::Full => Ok(Effect::None),
                S::Empty | S::ImplicitlyOpened | S::ExplicitlyOpened | S::Closed => {
                    let from = self.zone(z).written;
                    self.zones[z as usize].written = self.capacity;
                    self.set(z, S::Full);
                    Ok(Effect::Finish { zone: z, from })
                }
                _ => bad,
            },
            ZoneAction::Reset => match state {
                S::Empty => Ok(Effect::None),
                S::ImplicitlyOpened | S::ExplicitlyOpened | S::Closed | S::Full => {
                    let written = std::mem::take(&mut self.zones[z as usize].written);
                    self.set(z, S::Empty);
                    Ok(Effect::Reset { zone: z, written })
                }
                _ => bad,
            },
            ZoneAction::Offline => match state {
                S::Offline => Ok(Effect::None),
                S::ReadOnly => {
                    self.set(z, S::Offline);
                    Ok(Effect::None)
                }
                _ => bad,
            },
        }
    }

    /// The device takes zone `z` out of writing (`ReadOnly`) or out of use (`Offline`), as
    /// media failures do; its resources are released.
    pub fn fail(&mut self, z: u32, state: ZoneState) {
        debug_assert!(matches!(state, ZoneState::ReadOnly | ZoneState::Offline));
        self.set(z, state);
    }

    /// Restores zone `z` after a power loss with `written` blocks on flash: empty, full, or
    /// closed (open zones do not survive a power cycle).
    pub fn recover(&mut self, z: u32, written: u64) {
        self.zones[z as usize].written = written;
        let state = match written {
            0 => ZoneState::Empty,
            w if w >= self.capacity => ZoneState::Full,
            _ => ZoneState::Closed,
        };
        self.set(z, state);
    }

    /// Report Zones: descriptors of the zones from the one holding `slba` that `filter`
    /// selects, at most `max`; and the count the report states (with `partial`, the
    /// descriptors returned; otherwise every zone that matches).
    pub fn report(
        &self,
        slba: u64,
        filter: ZoneFilter,
        partial: bool,
        max: u32,
    ) -> (Vec<ZoneDescriptor>, u64) {
        let first = self.zone_of(slba);
        let matching = (first..self.count()).filter(|&z| match filter {
            ZoneFilter::All => true,
            ZoneFilter::State(s) => self.zone(z).state == s,
        });
        let mut out = Vec::new();
        let mut count = 0u64;
        for z in matching {
            count += 1;
            if out.len() < max as usize {
                let zone = self.zone(z);
                let wp = match zone.state {
                    ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline => {
                        self.start(z) + self.capacity
                    }
                    _ => self.start(z) + zone.written,
                };
                out.push(ZoneDescriptor {
                    start: self.start(z),
                    capacity: self.capacity,
                    wp,
                    state: zone.state,
                });
            } else if partial {
                break;
            }
        }
        let n = if partial { out.len() as u64 } else { count };
        (out, n)
    }
}

/// Whether a zone in `state` takes writes; the status that refuses them otherwise.
fn writable(state: ZoneState) -> Result<(), Status> {
    match state {
        ZoneState::Full => Err(Status::ZoneIsFull),
        ZoneState::ReadOnly => Err(Status::ZoneIsReadOnly),
        ZoneState::Offline => Err(Status::ZoneIsOffline),
        _ => Ok(()),
    }
}

/// Position of `s` in [`Zones::census`].
pub fn state_index(s: ZoneState) -> usize {
    match s {
        ZoneState::Empty => 0,
        ZoneState::ImplicitlyOpened => 1,
        ZoneState::ExplicitlyOpened => 2,
        ZoneState::Closed => 3,
        ZoneState::ReadOnly => 4,
        ZoneState::Full => 5,
        ZoneState::Offline => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ZoneState as S;

    fn zones() -> Zones {
        Zones::new(8, 64, 48, 2, 3)
    }

    #[test]
    fn writes_open_implicitly_advance_and_fill() {
        let mut z = zones();
        assert_eq!(z.write(0, 16), Ok(0));
        assert_eq!(z.zone(0), Zone { state: S::ImplicitlyOpened, written: 16 });
        assert_eq!(z.write(0, 8), Err(Status::ZoneInvalidWrite));
        assert_eq!(z.write(20, 8), Err(Status::ZoneInvalidWrite));
        assert_eq!(z.write(16, 40), Err(Status::ZoneBoundaryError));
        assert_eq!(z.write(16, 32), Ok(0));
        assert_eq!(z.zone(0).state, S::Full);
        assert_eq!((z.open_count(), z.active_count()), (0, 0));
        assert_eq!(z.write(48, 1), Err(Status::ZoneIsFull));
    }

    #[test]
    fn open_limit_closes_the_oldest_implicit_zone_and_active_limit_refuses() {
        let mut z = zones();
        z.write(0, 1).unwrap();
        z.write(64, 1).unwrap();
        // A third write needs an open resource: zone 0 (the oldest implicit) is closed.
        z.write(128, 1).unwrap();
        assert_eq!(z.zone(0).state, S::Closed);
        assert_eq!((z.open_count(), z.active_count()), (2, 3));
        // A fourth zone needs an active resource: none is left.
        assert_eq!(z.write(192, 1), Err(Status::TooManyActiveZones));
        // With both open zones explicitly opened, no open resource can be freed.
        z.send(64, ZoneAction::Open, false).unwrap();
        z.send(128, ZoneAction::Open, false).unwrap();
        assert_eq!(z.write(1, 1), Err(Status::TooManyOpenZones));
        assert_eq!(z.send(0, ZoneAction::Open, false), Err(Status::TooManyOpenZones));
    }

    #[test]
    fn append_returns_the_write_pointer_and_needs_a_zone_start() {
        let mut z = zones();
        assert_eq!(z.append(64, 8), Ok(64));
        assert_eq!(z.append(64, 8), Ok(72));
        assert!(matches!(z.append(65, 1), Err(Status::InvalidField(_))));
        assert_eq!(z.append(64, 33), Err(Status::ZoneBoundaryError));
    }

    #[test]
    fn send_actions_follow_the_state_machine() {
        let mut z = zones();
        assert_eq!(z.send(0, ZoneAction::Close, false), Err(Status::InvalidZoneStateTransition));
        z.send(0, ZoneAction::Open, false).unwrap();
        assert_eq!(z.zone(0).state, S::ExplicitlyOpened);
        // Closing a zone with nothing written makes it empty again.
        z.send(0, ZoneAction::Close, false).unwrap();
        assert_eq!(z.zone(0).state, S::Empty);
        z.write(0, 4).unwrap();
        z.send(0, ZoneAction::Close, false).unwrap();
        assert_eq!(z.zone(0).state, S::Closed);
        assert_eq!(z.send(0, ZoneAction::Finish, false), Ok(vec![Effect::Finish { zone: 0, from: 4 }]));
        assert_eq!(z.zone(0), Zone { state: S::Full, written: 48 });
        assert_eq!(z.send(0, ZoneAction::Open, false), Err(Status::InvalidZoneStateTransition));
        assert_eq!(z.send(0, ZoneAction::Reset, false), Ok(vec![Effect::Reset { zone: 0, written: 48 }]));
        assert_eq!(z.zone(0), Zone { state: S::Empty, written: 0 });
        assert_eq!(z.send(0, ZoneAction::Reset, false), Ok(vec![Effect::None]));
        assert_eq!(z.send(0, ZoneAction::Offline, false), Err(Status::InvalidZoneStateTransition));
        z.fail(1, S::ReadOnly);
        assert_eq!(z.write(64, 1), Err(Status::ZoneIsReadOnly));
        assert_eq!(z.send(64, ZoneAction::Reset, false), Err(Status::InvalidZoneStateTransition));
        z.send(64, ZoneAction::Offline, false).unwrap();
        assert_eq!(z.check_read(64, 1, true), Err(Status::ZoneIsOffline));
        assert_eq!(z.write(64, 1), Err(Status::ZoneIsOffline));
        assert!(matches!(z.send(3, ZoneAction::Reset, false), Err(Status::InvalidField(_))));
    }

    #[test]
    fn select_all_acts_on_the_zones_it_applies_to() {
        let mut z = zones();
        z.write(0, 4).unwrap();
        z.write(64, 48).unwrap(); // full
        z.send(128, ZoneAction::Open, false).unwrap();
        let e = z.send(0, ZoneAction::Reset, true).unwrap();
        let reset = |zone, written| Effect::Reset { zone, written };
        assert_eq!(e, [reset(0, 4), reset(1, 48), reset(2, 0)]);
        assert_eq!(z.census(), [8, 0, 0, 0, 0, 0, 0]);
        assert_eq!((z.open_count(), z.active_count()), (0, 0));
    }

    #[test]
    fn reads_across_zones_need_the_namespace_to_allow_them() {
        let z = zones();
        assert_eq!(z.check_read(60, 8, false), Err(Status::ZoneBoundaryError));
        assert_eq!(z.check_read(60, 8, true), Ok(()));
    }

    #[test]
    fn reports_filter_by_state_and_count_partially_or_not() {
        let mut z = zones();
        z.write(64, 8).unwrap();
        z.write(192, 48).unwrap();
        let (d, n) = z.report(0, ZoneFilter::All, false, 2);
        assert_eq!((d.len(), n), (2, 8));
        assert_eq!(d[1], ZoneDescriptor { start: 64, capacity: 48, wp: 72, state: S::ImplicitlyOpened });
        let (d, n) = z.report(0, ZoneFilter::State(S::Empty), true, 3);
        assert_eq!((d.iter().map(|d| d.start).collect::<Vec<_>>(), n), (vec![0, 128, 256], 3));
        let (d, n) = z.report(128, ZoneFilter::State(S::Full), false, 8);
        assert_eq!((d[0].wp, n), (240, 1));
    }

    #[test]
    fn recovery_closes_partly_written_zones() {
        let mut z = zones();
        z.recover(0, 0);
        z.recover(1, 10);
        z.recover(2, 48);
        assert_eq!([z.zone(0).state, z.zone(1).state, z.zone(2).state], [S::Empty, S::Closed, S::Full]);
        assert_eq!((z.open_count(), z.active_count()), (0, 1));
    }
}
