//! A job's isolation knobs: the parts of the array its data is confined to (`channels`,
//! `ways`, `dies`, `planes`, as MQSim's per-flow `Channel_IDs`, `Chip_IDs`, `Die_IDs` and
//! `Plane_IDs`) and the arbitration class of its queues (`queue_priority`).
//!
//! Each list is of indices within one level of the array (channel `c`, way `w` within a
//! channel, die `d` within a way, plane `p` within a die); the job's planes are every plane
//! whose channel, way, die and plane are all in their lists (a level not given: all of it).

use serde::{Deserialize, Serialize};

use nand::Geometry;

/// Where a job's data may live: index lists per level of the array (`None`: every index).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Confinement {
    /// Channels (`channels=0-3`). Default: all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channels: Option<Vec<u32>>,
    /// Ways (chips) within a channel (`ways=0,1`). Default: all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ways: Option<Vec<u32>>,
    /// Dies within a way (`dies=0`). Default: all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dies: Option<Vec<u32>>,
    /// Planes within a die (`planes=1`). Default: all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planes: Option<Vec<u32>>,
}

impl Confinement {
    /// Whether no level is restricted (the job may use the whole array).
    pub fn is_none(&self) -> bool {
        self.channels.is_none() && self.ways.is_none() && self.dies.is_none() && self.planes.is_none()
    }

    /// The global plane numbers (die by die, as the FTL numbers them) the job is confined to
    /// on `geo`, or `None` if it is not confined; an error in one line naming the option and
    /// the index the device lacks.
    pub fn planes_on(&self, geo: &Geometry) -> Result<Option<Vec<u32>>, String> {
        if self.is_none() {
            return Ok(None);
        }
        let level = |name: &str, list: &Option<Vec<u32>>, have: u32| -> Result<Vec<bool>, String> {
            let Some(list) = list else { return Ok(vec![true; have as usize]) };
            let mut keep = vec![false; have as usize];
            for &i in list {
                if i >= have {
                    let what = match name {
                        "channels" => format!("{have} channels"),
                        "ways" => format!("{have} ways per channel"),
                        "dies" => format!("{have} dies per way"),
                        _ => format!("{have} planes per die"),
                    };
                    return Err(format!(
                        "{name}: the device has no {} {i} (it has {what}, 0 to {})",
                        &name[..name.len() - 1],
                        have - 1
                    ));
                }
                keep[i as usize] = true;
            }
            Ok(keep)
        };
        let c = level("channels", &self.channels, geo.channels)?;
        let w = level("ways", &self.ways, geo.ways)?;
        let d = level("dies", &self.dies, geo.dies)?;
        let p = level("planes", &self.planes, geo.planes)?;
        let mut out = Vec::new();
        for ch in 0..geo.channels {
            for way in 0..geo.ways {
                for die in 0..geo.dies {
                    let flat = (ch * geo.ways + way) * geo.dies + die;
                    for plane in 0..geo.planes {
                        if c[ch as usize] && w[way as usize] && d[die as usize] && p[plane as usize] {
                            out.push(flat * geo.planes + plane);
                        }
                    }
                }
            }
        }
        if out.is_empty() {
            return Err("channels/ways/dies/planes: the lists leave no plane".into());
        }
        Ok(Some(out))
    }
}

/// A list of indices: numbers and ranges, comma-separated (`0,2-4` is 0, 2, 3, 4), at most
/// 4096 of them.
pub fn parse_indices(v: &str) -> Result<Vec<u32>, String> {
    let expected = || "indices: numbers or ranges such as 0-3 or 0,2".to_string();
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) =
            (a.trim().parse().map_err(|_| expected())?, b.trim().parse().map_err(|_| expected())?);
        if a > b || out.len() + (b - a) as usize >= 4096 {
            return Err(expected());
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::ByteSize;

    fn geo() -> Geometry {
        Geometry {
            channels: 4,
            ways: 2,
            dies: 1,
            planes: 2,
            blocks: 8,
            pages: 2,
            page_size: ByteSize::kib(16),
            oob_size: ByteSize(0),
            mapping_unit: ByteSize::kib(4),
        }
    }

    #[test]
    fn levels_intersect_into_planes() {
        let none = Confinement::default();
        assert_eq!(none.planes_on(&geo()), Ok(None));
        let half = Confinement { channels: Some(vec![0, 1]), ..Default::default() };
        // Dies 0..4 are channels 0 and 1 (two ways each), two planes each.
        assert_eq!(half.planes_on(&geo()), Ok(Some((0..8).collect())));
        let narrow = Confinement {
            channels: Some(vec![3]),
            ways: Some(vec![1]),
            planes: Some(vec![0]),
            ..Default::default()
        };
        assert_eq!(narrow.planes_on(&geo()), Ok(Some(vec![14])));
    }

    #[test]
    fn an_index_the_device_lacks_is_named() {
        let c = Confinement { channels: Some(vec![4]), ..Default::default() };
        let e = c.planes_on(&geo()).unwrap_err();
        assert_eq!(e, "channels: the device has no channel 4 (it has 4 channels, 0 to 3)");
        let w = Confinement { ways: Some(vec![2]), ..Default::default() };
        assert!(w.planes_on(&geo()).unwrap_err().starts_with("ways: the device has no way 2"));
    }

    #[test]
    fn indices_parse_as_lists_and_ranges() {
        assert_eq!(parse_indices("0-3"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(parse_indices("2,0,1-2"), Ok(vec![0, 1, 2]));
        assert!(parse_indices("3-1").is_err());
        assert!(parse_indices("a").is_err());
    }
}
