//! Where pages go: a write-allocation list per die (the die's open blocks, one per plane and
//! stream, handed out page by page: the firmware's [`Allocator`] frontiers), least-utilised
//! channel first, the host's placement (a group or a die), super-pages (one page on every
//! channel of a group) and the pages being filled sector by sector in the array's SRAM.

use firmware::ftl::{AllocConfig, Allocator, BlockManager, Stream};
use nand::{DieIdx, Geometry, PageIdx};

/// Where a write may go.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    /// Anywhere: least-utilised channel first.
    Any,
    /// Any die of a logical channel group.
    Group(u32),
    /// One die.
    Die(u32),
}

/// An SRAM page buffer the sectors are filling, for a die (its page is allocated when it is
/// programmed, so that pages of a block are programmed in the order they are allocated).
pub(crate) struct OpenPage {
    /// The die the page will go to.
    pub die: u32,
    /// The buffer's name.
    pub buffer: u64,
    /// The units placed so far, by slot: (LPN, write sequence).
    pub units: Vec<(u32, u64)>,
}

/// Allocation state: frontiers, channel and die load, the pages being filled.
pub(crate) struct Placer {
    geo: Geometry,
    groups: u32,
    frontiers: Allocator,
    /// Pages allocated and not yet programmed, per channel and per die.
    channel_load: Vec<u32>,
    die_load: Vec<u32>,
    plane_rr: Vec<u32>,
    channel_rr: u32,
    group_rr: u32,
    /// Per group: the die (within each channel) of its next super-page.
    group_die: Vec<u32>,
    /// Free blocks host data leaves each plane (GC's reserve).
    hard: u32,
    /// Pages being filled, per target.
    pub open: Vec<(Target, OpenPage)>,
    next_buffer: u64,
}

impl Placer {
    pub fn new(geo: &Geometry, groups: u32, hard: u32) -> Placer {
        let dies = geo.total_dies() as usize;
        Placer {
            geo: geo.clone(),
            groups,
            frontiers: Allocator::new(geo, &AllocConfig::LeastUtilised),
            channel_load: vec![0; geo.channels as usize],
            die_load: vec![0; dies],
            plane_rr: vec![0; dies],
            channel_rr: 0,
            group_rr: 0,
            group_die: vec![0; groups as usize],
            hard,
            open: Vec::new(),
            next_buffer: 0,
        }
    }

    /// The frontiers (for mounting: partly written blocks become frontiers again).
    pub fn frontiers(&mut self) -> &mut Allocator {
        &mut self.frontiers
    }

    /// Channels of `group`.
    pub fn group_channels(&self, group: u32) -> std::ops::Range<u32> {
        let per = self.geo.channels / self.groups;
        group * per..(group + 1) * per
    }

    fn dies_of(&self, channel: u32) -> std::ops::Range<u32> {
        let n = self.geo.dies_per_channel();
        channel * n..(channel + 1) * n
    }

    fn has_room(&self, die: u32, stream: Stream, blocks: &BlockManager) -> bool {
        let planes = self.geo.planes;
        (0..planes).any(|p| self.frontiers.has_room(stream, die * planes + p, blocks, self.hard))
    }

    /// The next page of `stream` on `die` (its planes in turn), counted as in flight.
    pub fn page_on_die(&mut self, die: u32, stream: Stream, blocks: &mut BlockManager) -> Option<PageIdx> {
        let page = self.frontier_page(die, stream, blocks)?;
        self.load(die, 1);
        Some(page)
    }

    /// The next page of `stream` on `die`, already counted as in flight.
    pub fn frontier_page(&mut self, die: u32, stream: Stream, blocks: &mut BlockManager) -> Option<PageIdx> {
        let planes = self.geo.planes;
        for k in 0..planes {
            let p = die * planes + (self.plane_rr[die as usize] + k) % planes;
            if let Some(page) = self.frontiers.page_in(stream, p, blocks, self.hard) {
                self.plane_rr[die as usize] = (p % planes + 1) % planes;
                return Some(page);
            }
        }
        None
    }

    fn load(&mut self, die: u32, n: i32) {
        let c = self.geo.channel_of(DieIdx(die)) as usize;
        self.channel_load[c] = self.channel_load[c].saturating_add_signed(n);
        self.die_load[die as usize] = self.die_load[die as usize].saturating_add_signed(n);
    }

    /// The next GC page in `plane` (GC keeps a victim's data in its plane).
    pub fn gc_page(&mut self, plane: u32, blocks: &mut BlockManager) -> Option<PageIdx> {
        let page = self.frontiers.page_in(Stream::Gc, plane, blocks, self.hard)?;
        let die = plane / self.geo.planes;
        self.channel_load[self.geo.channel_of(DieIdx(die)) as usize] += 1;
        self.die_load[die as usize] += 1;
        Some(page)
    }

    /// The program of `page` is over.
    pub fn done(&mut self, page: PageIdx) {
        let die = self.geo.die_of(self.geo.block_of(page));
        self.load(die.0, -1);
    }

    /// The die for a new user page on `target`: the least-utilised channel first (fewest pages
    /// in flight; ties in turn), then its least-loaded die with room.
    pub fn pick_die(&mut self, target: Target, blocks: &BlockManager) -> Option<u32> {
        let channels = match target {
            Target::Die(d) => return self.has_room(d, Stream::User, blocks).then_some(d),
            Target::Group(g) => self.group_channels(g),
            Target::Any => 0..self.geo.channels,
        };
        let n = channels.len() as u32;
        let best = (0..n)
            .map(|k| channels.start + (self.channel_rr + k) % n)
            .filter_map(|c| {
                let die = self
                    .dies_of(c)
                    .filter(|&d| self.has_room(d, Stream::User, blocks))
                    .min_by_key(|&d| self.die_load[d as usize])?;
                Some((c, die))
            })
            .min_by_key(|&(c, _)| self.channel_load[c as usize])?;
        self.channel_rr = (best.0 - channels.start + 1) % n;
        Some(best.1)
    }

    /// One page on every channel of a group (the least-loaded group that can take one, or the
    /// host's), on the group's next die where it has room: a super-page, in channel order.
    pub fn super_page(&mut self, target: Target, blocks: &mut BlockManager) -> Option<Vec<PageIdx>> {
        let fits = |me: &Placer, g: u32| {
            me.group_channels(g).all(|c| me.dies_of(c).any(|d| me.has_room(d, Stream::User, blocks)))
        };
        let group = match target {
            Target::Die(_) => return None,
            Target::Group(g) => fits(self, g).then_some(g)?,
            Target::Any => {
                let load = |me: &Placer, g: u32| {
                    me.group_channels(g).map(|c| me.channel_load[c as usize]).sum::<u32>()
                };
                let g = (0..self.groups)
                    .map(|k| (self.group_rr + k) % self.groups)
                    .filter(|&g| fits(self, g))
                    .min_by_key(|&g| load(self, g))?;
                self.group_rr = (g + 1) % self.groups;
                g
            }
        };
        let k = self.group_die[group as usize];
        let n = self.geo.dies_per_channel();
        self.group_die[group as usize] = (k + 1) % n;
        let mut pages = Vec::new();
        for c in self.group_channels(group) {
            let first = c * n;
            let die =
                (0..n).map(|i| first + (k + i) % n).find(|&d| self.has_room(d, Stream::User, blocks))?;
            pages.push(self.page_on_die(die, Stream::User, blocks).expect("checked for room"));
        }
        Some(pages)
    }

    /// Places one unit in the buffer being filled for `target` (opening one, on the die
    /// chosen for it, if none): the die, buffer and slot, and the buffer if it is now full (it
    /// leaves the open list). `None` if no die of the target has room.
    pub fn place_sector(
        &mut self,
        target: Target,
        lpn: u32,
        born: u64,
        blocks: &BlockManager,
    ) -> Option<(u32, u64, u32, Option<OpenPage>)> {
        let i = match self.open.iter().position(|(t, _)| *t == target) {
            Some(i) => i,
            None => {
                let die = self.pick_die(target, blocks)?;
                self.load(die, 1);
                self.next_buffer += 1;
                self.open.push((target, OpenPage { die, buffer: self.next_buffer, units: Vec::new() }));
                self.open.len() - 1
            }
        };
        let open = &mut self.open[i].1;
        open.units.push((lpn, born));
        let (die, buffer, slot) = (open.die, open.buffer, open.units.len() as u32 - 1);
        let full = (open.units.len() as u32 == self.geo.units_per_page()).then(|| self.open.swap_remove(i).1);
        Some((die, buffer, slot, full))
    }

    /// Takes every page being filled (to program it part-full: a flush, a FUA write).
    pub fn seal_all(&mut self) -> Vec<OpenPage> {
        self.open.drain(..).map(|(_, p)| p).collect()
    }

    /// Takes the page being filled for `target`, if any.
    pub fn seal(&mut self, target: Target) -> Option<OpenPage> {
        let i = self.open.iter().position(|(t, _)| *t == target)?;
        Some(self.open.swap_remove(i).1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::ByteSize;

    fn geo() -> Geometry {
        Geometry {
            channels: 4,
            ways: 1,
            dies: 2,
            planes: 1,
            blocks: 8,
            pages: 4,
            page_size: ByteSize::kib(16),
            oob_size: ByteSize(0),
            mapping_unit: ByteSize::kib(4),
        }
    }

    #[test]
    fn least_utilised_channels_first_and_placement_is_honoured() {
        let g = geo();
        let mut blocks = BlockManager::new(&g, false, &[]);
        let mut p = Placer::new(&g, 2, 1);
        // Four pages land on four different channels before any channel takes a second.
        let dies: Vec<u32> = (0..4)
            .map(|_| {
                let d = p.pick_die(Target::Any, &blocks).unwrap();
                p.page_on_die(d, Stream::User, &mut blocks).unwrap();
                d
            })
            .collect();
        let mut channels: Vec<u32> = dies.iter().map(|&d| g.channel_of(DieIdx(d))).collect();
        channels.sort_unstable();
        assert_eq!(channels, vec![0, 1, 2, 3]);
        // Group 1 is channels 2 and 3; die 5 is channel 2's second die.
        let d = p.pick_die(Target::Group(1), &blocks).unwrap();
        assert!((4..8).contains(&d), "{d}");
        assert_eq!(p.pick_die(Target::Die(5), &blocks), Some(5));
        // A super-page of group 0: one page on channel 0 and one on channel 1.
        let sp = p.super_page(Target::Group(0), &mut blocks).unwrap();
        let chans: Vec<u32> = sp.iter().map(|&pg| g.channel_of(g.die_of(g.block_of(pg)))).collect();
        assert_eq!(chans, vec![0, 1]);
        // Sectors fill one buffer before the next opens.
        let (_, a, s0, full) = p.place_sector(Target::Any, 10, 1, &blocks).unwrap();
        assert_eq!((s0, full.is_none()), (0, true));
        for (i, lpn) in (11..14).enumerate() {
            let (_, b, s, full) = p.place_sector(Target::Any, lpn, 2 + i as u64, &blocks).unwrap();
            assert_eq!((b, s), (a, i as u32 + 1));
            assert_eq!(full.is_some(), i == 2);
        }
    }
}
