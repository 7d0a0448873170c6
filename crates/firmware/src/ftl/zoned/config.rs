//! A zoned namespace's configuration (`[ftl.zoned]`) and the layout it gives: how many zones,
//! their size and capacity, and which planes each zone's pages stripe over.

use nand::{DieIdx, Geometry};
use serde::{Deserialize, Serialize};
use sim::ByteSize;
use sim::config::{ConfigError, ensure};

/// A Zoned Namespace (NVMe ZNS command set) in place of the conventional one: the host writes
/// each zone sequentially and resets it whole; the device has no garbage collection.
///
/// Each zone spans a set of `dies` dies (ConfZNS's layouts: every die, a subset, or one) and
/// takes `blocks_per_plane` blocks in each of their planes, from the plane's free pool, as it
/// is written; its pages stripe over those planes channel first. A reset erases its blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZonedConfig {
    /// The namespace is zoned (`false`: the table is kept but the namespace is conventional,
    /// as `--set ftl.zoned.enabled=false` makes a ZNS preset's conventional twin). Default: true.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Dies a zone spans (0: every die). Must divide the dies of the array. Default: 0.
    #[serde(default)]
    pub dies: u32,
    /// Blocks a zone takes in each plane of its dies. Default: 1.
    #[serde(default = "one")]
    pub blocks_per_plane: u32,
    /// Zone size (the distance between zone starts); at least the zone capacity, a whole
    /// number of mapping units. Default: the capacity rounded up to a power of two (zone
    /// sizes of real drives and of Linux's zoned block layer are powers of two).
    #[serde(default)]
    pub zone_size: Option<ByteSize>,
    /// Maximum open zones (MOR + 1; 0: no limit). Default: 14 (a ZN540's).
    #[serde(default = "fourteen")]
    pub max_open: u32,
    /// Maximum active zones (MAR + 1; 0: no limit); at least `max_open`. Default: 14.
    #[serde(default = "fourteen")]
    pub max_active: u32,
    /// Zone Append Size Limit (ZASL). Default: the host interface's maximum transfer.
    #[serde(default)]
    pub append_limit: Option<ByteSize>,
    /// Read Across Zone Boundaries: reads may span zones. Default: true.
    #[serde(default = "yes")]
    pub cross_zone_reads: bool,
    /// Zone pages queued or programming at once, over all zones (the write buffer, in pages;
    /// a write waits while it is full). Default: 0, two per plane of the array.
    #[serde(default)]
    pub write_buffer_pages: u32,
}

fn one() -> u32 {
    1
}
fn fourteen() -> u32 {
    14
}
fn yes() -> bool {
    true
}

impl Default for ZonedConfig {
    fn default() -> Self {
        ZonedConfig {
            enabled: true,
            dies: 0,
            blocks_per_plane: 1,
            zone_size: None,
            max_open: 14,
            max_active: 14,
            append_limit: None,
            cross_zone_reads: true,
            write_buffer_pages: 0,
        }
    }
}

/// The zones a configuration gives on a geometry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneLayout {
    /// Zones.
    pub zones: u32,
    /// Zone size, mapping units.
    pub size_units: u64,
    /// Zone capacity, mapping units.
    pub capacity_units: u64,
    /// Dies each zone spans.
    pub dies: u32,
    /// Die sets (zone `z` is on set `z % sets`).
    pub sets: u32,
    /// Write buffer, pages.
    pub buffer_pages: u32,
}

impl ZonedConfig {
    /// The layout on `geo`, keeping `op` of each plane's blocks spare (for bad blocks and the
    /// pages flushes pad).
    pub fn layout(&self, geo: &Geometry, op: f64) -> ZoneLayout {
        let dies = if self.dies == 0 { geo.total_dies() } else { self.dies };
        let sets = geo.total_dies() / dies.max(1);
        let per_set = ((geo.blocks as f64 * (1.0 - op)).floor() as u32) / self.blocks_per_plane.max(1);
        let capacity_units =
            dies as u64 * geo.planes as u64 * self.blocks_per_plane as u64 * geo.units_per_block() as u64;
        let size_units = match self.zone_size {
            Some(s) => s.bytes() / geo.mapping_unit.bytes(),
            None => capacity_units.next_power_of_two(),
        };
        let buffer_pages = if self.write_buffer_pages == 0 {
            2 * geo.total_dies() * geo.planes
        } else {
            self.write_buffer_pages
        };
        ZoneLayout { zones: sets * per_set, size_units, capacity_units, dies, sets, buffer_pages }
    }

    /// Checks the zones against the geometry; the error names the first bad field (relative
    /// to `ftl.zoned`).
    pub fn validate(
        &self,
        geo: &Geometry,
        op: f64,
        max_transfer: Option<ByteSize>,
    ) -> Result<(), ConfigError> {
        let dies = geo.total_dies();
        ensure(
            self.dies <= dies && (self.dies == 0 || dies.is_multiple_of(self.dies)),
            "zoned.dies",
            || format!("must divide the array's {dies} dies (or be 0 for all of them; got {})", self.dies),
        )?;
        ensure(self.blocks_per_plane >= 1, "zoned.blocks_per_plane", || "must be at least 1".into())?;
        let unit = geo.mapping_unit.bytes();
        let l = self.layout(geo, op);
        if let Some(s) = self.zone_size {
            ensure(s.bytes().is_multiple_of(unit) && s.bytes() > 0, "zoned.zone_size", || {
                format!("{s} is not a whole number of mapping units ({})", ByteSize(unit))
            })?;
            ensure(l.size_units >= l.capacity_units, "zoned.zone_size", || {
                format!(
                    "{s} is below the zone capacity the layout gives ({}: {} dies x {} planes x {} blocks)",
                    ByteSize(l.capacity_units * unit),
                    l.dies,
                    geo.planes,
                    self.blocks_per_plane
                )
            })?;
        }
        ensure(l.zones >= 1, "zoned.blocks_per_plane", || {
            format!(
                "leaves no zone: a plane keeps {} blocks for zones",
                (geo.blocks as f64 * (1.0 - op)).floor()
            )
        })?;
        ensure(self.max_active == 0 || self.max_open <= self.max_active, "zoned.max_open", || {
            format!("{} open zones exceed the {} active ones allowed", self.max_open, self.max_active)
        })?;
        ensure(
            l.zones as u64 * l.size_units < crate::ftl::config::TRANSLATION_LPN_BASE as u64,
            "zoned.zone_size",
            || format!("{} zones of {} units exceed the units an OOB can name", l.zones, l.size_units),
        )?;
        if let (Some(a), Some(t)) = (self.append_limit, max_transfer) {
            ensure(a.bytes() >= unit && a.bytes() <= t.bytes(), "zoned.append_limit", || {
                format!(
                    "must be from one mapping unit ({}) to the maximum transfer ({t}); got {a}",
                    ByteSize(unit)
                )
            })?;
        }
        Ok(())
    }
}

impl ZoneLayout {
    /// The planes (the BlockManager's flat plane numbers) zone `z`'s pages stripe over, in
    /// order: the dies of its set channel first, then their planes.
    pub fn planes(&self, geo: &Geometry, z: u32) -> Vec<u32> {
        let set = z % self.sets;
        let dpc = geo.dies_per_channel();
        let die = |i: u32| {
            // The i-th die in channel-first order.
            let (channel, rest) = (i % geo.channels, i / geo.channels);
            DieIdx(channel * dpc + rest)
        };
        let dies: Vec<DieIdx> = (set * self.dies..(set + 1) * self.dies).map(die).collect();
        (0..geo.planes).flat_map(|p| dies.iter().map(move |d| d.0 * geo.planes + p)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 2,
            ways: 2,
            dies: 1,
            planes: 2,
            blocks: 100,
            pages: 64,
            page_size: ByteSize(16384),
            oob_size: ByteSize(0),
            mapping_unit: ByteSize(4096),
        }
    }

    #[test]
    fn layouts_count_zones_and_stripe_channel_first() {
        let all = ZonedConfig::default().layout(&geo(), 0.07);
        // 93 blocks per plane for zones; a zone takes one in each of 8 planes.
        assert_eq!((all.zones, all.capacity_units, all.size_units), (93, 8 * 256, 2048));
        assert_eq!(all.planes(&geo(), 5), [0, 4, 2, 6, 1, 5, 3, 7]);
        let one = ZonedConfig { dies: 1, ..ZonedConfig::default() }.layout(&geo(), 0.07);
        assert_eq!((one.zones, one.capacity_units, one.size_units), (4 * 93, 512, 512));
        assert_eq!((one.planes(&geo(), 0), one.planes(&geo(), 1), one.planes(&geo(), 5)), {
            (vec![0, 1], vec![4, 5], vec![4, 5])
        });
    }

    #[test]
    fn bad_zone_settings_are_one_line_errors() {
        let e = |c: ZonedConfig| c.validate(&geo(), 0.07, Some(ByteSize(1 << 20))).unwrap_err().to_string();
        let size = ZonedConfig { zone_size: Some(ByteSize(10_000_000)), ..ZonedConfig::default() };
        assert!(e(size).contains("not a whole number of mapping units"));
        let small = ZonedConfig { zone_size: Some(ByteSize(4 << 20)), ..ZonedConfig::default() };
        assert!(e(small).contains("below the zone capacity"));
        let open = ZonedConfig { max_open: 8, max_active: 4, ..ZonedConfig::default() };
        assert!(e(open).contains("8 open zones exceed the 4 active ones"));
        assert!(e(ZonedConfig { dies: 3, ..ZonedConfig::default() }).contains("must divide"));
        let append = ZonedConfig { append_limit: Some(ByteSize(2 << 20)), ..ZonedConfig::default() };
        assert!(e(append).contains("zoned.append_limit"));
    }
}
