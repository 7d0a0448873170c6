//! NAND timing: array times per cell and page type (tR, tPROG, tBERS), command / address setup,
//! and channel transfer at MT/s x bus width.
//!
//! [`Timing`] is the configuration (cell-dependent values may be left out and default to the
//! cell type's datasheet values); [`TimingModel`] is the resolved model the FIL uses.

use serde::{Deserialize, Serialize};
use sim::SimDuration;
use sim::config::{ConfigError, ensure};

use crate::cell::CellType;

/// One duration for every page type, or one per page type in word-line order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PerPageType {
    /// The same for every page type.
    One(SimDuration),
    /// One per page type (`[LSB, MSB]` for MLC, `[LSB, CSB, MSB]` for TLC, ...).
    Each(Vec<SimDuration>),
}

impl<'de> Deserialize<'de> for PerPageType {
    /// A duration (`"50us"`, or integer nanoseconds) or a list of them.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = PerPageType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a duration such as \"50us\" or a list of durations, one per page type")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<PerPageType, E> {
                s.parse().map(PerPageType::One).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<PerPageType, E> {
                Ok(PerPageType::One(SimDuration::from_nanos(n)))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<PerPageType, E> {
                u64::try_from(n)
                    .map_err(|_| E::custom("a duration cannot be negative"))
                    .and_then(|n| self.visit_u64(n))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<PerPageType, A::Error> {
                let mut v = Vec::new();
                while let Some(d) = seq.next_element::<SimDuration>()? {
                    v.push(d);
                }
                Ok(PerPageType::Each(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl PerPageType {
    fn resolve(&self, cell: CellType) -> Vec<SimDuration> {
        match self {
            PerPageType::One(d) => vec![*d; cell.bits()],
            PerPageType::Each(v) => v.clone(),
        }
    }
}

/// Flash timing configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Cell type. Default: `mlc`.
    #[serde(default = "default_cell")]
    pub cell: CellType,
    /// Array read time tR, per page type. Default: the cell type's (SLC 25us, MLC 45/55us,
    /// TLC 65/75/85us, QLC 100-160us).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_read: Option<PerPageType>,
    /// Array program time tPROG, per page type. Default: SLC 260us, MLC 290/870us,
    /// TLC 420/840/1260us, QLC 1.2-3ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_prog: Option<PerPageType>,
    /// Block erase time tBERS. Default: SLC 1.5ms, MLC 2.8ms, TLC 4.2ms, QLC 6ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_erase: Option<SimDuration>,
    /// Command and address cycles of a read, on the channel. Default: 1us.
    #[serde(default = "default_cmd")]
    pub t_cmd_read: SimDuration,
    /// Command and address cycles of a program, on the channel. Default: 1us.
    #[serde(default = "default_cmd")]
    pub t_cmd_prog: SimDuration,
    /// Command and address cycles of an erase, on the channel. Default: 1us.
    #[serde(default = "default_cmd")]
    pub t_cmd_erase: SimDuration,
    /// Channel transfer rate in mega-transfers per second. Default: 400.
    #[serde(default = "default_mts")]
    pub channel_mts: u32,
    /// Channel bus width in bits. Default: 8.
    #[serde(default = "default_width")]
    pub bus_width: u32,
    /// Fixed cost added to every data-out transfer (DMA setup, ECC pass). Default: 0.
    #[serde(default)]
    pub read_xfer_overhead: SimDuration,
    /// Fixed cost added to every data-in transfer. Default: 0.
    #[serde(default)]
    pub write_xfer_overhead: SimDuration,
    /// Whether the OOB area moves over the channel with the data. Default: true.
    #[serde(default = "yes")]
    pub transfer_oob: bool,
    /// Cache program: a die may load the next page's data while its array programs the
    /// previous one. Default: false.
    #[serde(default)]
    pub cache_program: bool,
    /// Rated program/erase cycles (for wear reporting). Default: SLC 100000, MLC 5000,
    /// TLC 1200, QLC 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endurance: Option<u32>,
}

fn default_cell() -> CellType {
    CellType::Mlc
}
fn default_cmd() -> SimDuration {
    SimDuration::from_micros(1)
}
fn default_mts() -> u32 {
    400
}
fn default_width() -> u32 {
    8
}
fn yes() -> bool {
    true
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            cell: default_cell(),
            t_read: None,
            t_prog: None,
            t_erase: None,
            t_cmd_read: default_cmd(),
            t_cmd_prog: default_cmd(),
            t_cmd_erase: default_cmd(),
            channel_mts: default_mts(),
            bus_width: default_width(),
            read_xfer_overhead: SimDuration::ZERO,
            write_xfer_overhead: SimDuration::ZERO,
            transfer_oob: true,
            cache_program: false,
            endurance: None,
        }
    }
}

fn us(v: &[u64]) -> PerPageType {
    PerPageType::Each(v.iter().map(|&u| SimDuration::from_micros(u)).collect())
}

/// Datasheet-style defaults per cell type (PRESETS.md, Table 1 of the Host-FTL array paper; the
/// per-page-type spread around those means, and QLC, are ssdlab's assumptions).
fn cell_defaults(cell: CellType) -> (PerPageType, PerPageType, SimDuration, u32) {
    match cell {
        CellType::Slc => (us(&[25]), us(&[260]), SimDuration::from_micros(1500), 100_000),
        CellType::Mlc => (us(&[45, 55]), us(&[290, 870]), SimDuration::from_micros(2800), 5_000),
        CellType::Tlc => (us(&[65, 75, 85]), us(&[420, 840, 1260]), SimDuration::from_micros(4200), 1_200),
        CellType::Qlc => {
            (us(&[100, 120, 140, 160]), us(&[1200, 1800, 2400, 3000]), SimDuration::from_millis(6), 1_000)
        }
    }
}

impl Timing {
    /// The same configuration with every cell-dependent default filled in.
    pub fn resolved(&self) -> Timing {
        let (r, p, e, n) = cell_defaults(self.cell);
        Timing {
            t_read: Some(self.t_read.clone().unwrap_or(r)),
            t_prog: Some(self.t_prog.clone().unwrap_or(p)),
            t_erase: Some(self.t_erase.unwrap_or(e)),
            endurance: Some(self.endurance.unwrap_or(n)),
            ..self.clone()
        }
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = self.resolved();
        let bits = self.cell.bits();
        for (name, v) in [("t_read", t.t_read.as_ref()), ("t_prog", t.t_prog.as_ref())] {
            let v = v.expect("resolved").resolve(self.cell);
            ensure(v.len() == bits, name, || {
                format!(
                    "{} cells have {bits} page types; give one value or {bits} (got {})",
                    self.cell,
                    v.len()
                )
            })?;
            for d in &v {
                ensure(!d.is_zero(), name, || "must be greater than 0".into())?;
                ensure(*d <= SimDuration::from_secs(1), name, || format!("{d} is longer than 1s"))?;
            }
        }
        let erase = t.t_erase.expect("resolved");
        ensure(!erase.is_zero(), "t_erase", || "must be greater than 0".into())?;
        ensure(erase <= SimDuration::from_secs(1), "t_erase", || format!("{erase} is longer than 1s"))?;
        ensure(self.channel_mts >= 1 && self.channel_mts <= 100_000, "channel_mts", || {
            format!("must be between 1 and 100000 MT/s (got {})", self.channel_mts)
        })?;
        ensure([8, 16, 32, 64].contains(&self.bus_width), "bus_width", || {
            format!("must be 8, 16, 32 or 64 bits (got {})", self.bus_width)
        })?;
        ensure(t.endurance.expect("resolved") >= 1, "endurance", || "must be at least 1".into())?;
        Ok(())
    }

    /// The resolved model. Call after [`Timing::validate`].
    pub fn model(&self, page_bytes: u32, oob_bytes: u32) -> TimingModel {
        let t = self.resolved();
        let per_type = |v: &Option<PerPageType>| {
            let v = v.as_ref().expect("resolved").resolve(self.cell);
            let mut out = [SimDuration::ZERO; 4];
            out[..v.len()].copy_from_slice(&v);
            out
        };
        let xfer_bytes = page_bytes + if self.transfer_oob { oob_bytes } else { 0 };
        TimingModel {
            cell: self.cell,
            t_read: per_type(&t.t_read),
            t_prog: per_type(&t.t_prog),
            t_erase: t.t_erase.expect("resolved"),
            t_cmd_read: self.t_cmd_read,
            t_cmd_prog: self.t_cmd_prog,
            t_cmd_erase: self.t_cmd_erase,
            fs_per_byte: 8_000_000_000 / (self.channel_mts as u64 * self.bus_width as u64),
            read_overhead: self.read_xfer_overhead,
            write_overhead: self.write_xfer_overhead,
            page_xfer_bytes: xfer_bytes,
            oob_bytes: if self.transfer_oob { oob_bytes } else { 0 },
            cache_program: self.cache_program,
            endurance: t.endurance.expect("resolved"),
        }
    }
}

/// Resolved timing, with the arithmetic the FIL needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimingModel {
    /// Cell type.
    pub cell: CellType,
    t_read: [SimDuration; 4],
    t_prog: [SimDuration; 4],
    /// Block erase time.
    pub t_erase: SimDuration,
    /// Read command / address setup.
    pub t_cmd_read: SimDuration,
    /// Program command / address setup.
    pub t_cmd_prog: SimDuration,
    /// Erase command / address setup.
    pub t_cmd_erase: SimDuration,
    fs_per_byte: u64,
    read_overhead: SimDuration,
    write_overhead: SimDuration,
    page_xfer_bytes: u32,
    oob_bytes: u32,
    /// Whether cache program is enabled.
    pub cache_program: bool,
    /// Rated P/E cycles.
    pub endurance: u32,
}

impl TimingModel {
    /// tR of the page at `offset` in its block.
    pub fn t_read(&self, offset: u32) -> SimDuration {
        self.t_read[self.cell.page_type_index(offset)]
    }

    /// tPROG of the page at `offset` in its block.
    pub fn t_prog(&self, offset: u32) -> SimDuration {
        self.t_prog[self.cell.page_type_index(offset)]
    }

    /// Channel time to move `bytes` at the bus rate, without overheads.
    pub fn bus_time(&self, bytes: u32) -> SimDuration {
        SimDuration::from_nanos((bytes as u64 * self.fs_per_byte).div_ceil(1_000_000))
    }

    /// Channel time of a data-out of `bytes` (bus time plus the read overhead).
    pub fn read_transfer(&self, bytes: u32) -> SimDuration {
        self.read_overhead + self.bus_time(bytes)
    }

    /// Channel time of a whole-page data-out.
    pub fn page_read_transfer(&self) -> SimDuration {
        self.read_transfer(self.page_xfer_bytes)
    }

    /// Channel time of a whole-page data-in (bus time plus the write overhead).
    pub fn page_write_transfer(&self) -> SimDuration {
        self.write_overhead + self.bus_time(self.page_xfer_bytes)
    }

    /// Bytes moved for a whole page.
    pub fn page_xfer_bytes(&self) -> u32 {
        self.page_xfer_bytes
    }

    /// Bytes moved to read `units` mapping units of `unit_bytes` each (with their share of the
    /// OOB), or the whole page when `units` covers it.
    pub fn partial_xfer_bytes(&self, units: u32, units_per_page: u32, unit_bytes: u32) -> u32 {
        if units >= units_per_page {
            return self.page_xfer_bytes;
        }
        units * unit_bytes + self.oob_bytes * units / units_per_page
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_is_bytes_over_rate() {
        let t = Timing::default().model(16384, 0);
        // 400 MT/s x 8 bit = 400 MB/s -> 2.5 ns per byte.
        assert_eq!(t.page_read_transfer(), SimDuration::from_nanos(40_960));
        let t16 = Timing { bus_width: 16, channel_mts: 333, ..Timing::default() }.model(4096, 0);
        // 333 MT/s x 2 B = 666 MB/s -> 4096 B in 6.1501.. us, rounded up to the ns.
        assert_eq!(t16.page_read_transfer(), SimDuration::from_nanos(6_151));
        let o = Timing {
            read_xfer_overhead: SimDuration::from_micros(28),
            write_xfer_overhead: SimDuration::from_micros(62),
            ..Timing::default()
        }
        .model(16384, 1872);
        // SoftSSD: 18,256 B at 400 MB/s = 45.64 us on the bus, plus the measured overheads.
        assert_eq!(o.page_read_transfer(), SimDuration::from_nanos(73_640));
        assert_eq!(o.page_write_transfer(), SimDuration::from_nanos(107_640));
    }

    #[test]
    fn cell_defaults_and_page_types() {
        let t = Timing { cell: CellType::Mlc, ..Timing::default() }.model(16384, 0);
        assert_eq!(t.t_prog(0), SimDuration::from_micros(290));
        assert_eq!(t.t_prog(1), SimDuration::from_micros(870));
        assert_eq!(t.t_read(2), SimDuration::from_micros(45));
        assert_eq!(t.endurance, 5_000);
    }

    #[test]
    fn validation_names_the_field() {
        let bad = Timing {
            t_prog: Some(PerPageType::Each(vec![SimDuration::from_micros(1); 3])),
            ..Timing::default()
        };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "t_prog: mlc cells have 2 page types; give one value or 2 (got 3)"
        );
        let bad = Timing { bus_width: 12, ..Timing::default() };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "bus_width: must be 8, 16, 32 or 64 bits (got 12)"
        );
        let bad = Timing { t_erase: Some(SimDuration::ZERO), ..Timing::default() };
        assert_eq!(bad.validate().unwrap_err().to_string(), "t_erase: must be greater than 0");
        let bad = Timing { channel_mts: 0, ..Timing::default() };
        assert!(bad.validate().unwrap_err().to_string().starts_with("channel_mts:"));
    }

    #[test]
    fn parses_one_or_many_values() {
        let t: Timing = toml::from_str("cell='tlc'\nt_read='70us'\nt_prog=['0.5ms','1ms','1.5ms']").unwrap();
        t.validate().unwrap();
        let m = t.model(16384, 0);
        assert_eq!(m.t_read(1), SimDuration::from_micros(70));
        assert_eq!(m.t_prog(2), SimDuration::from_micros(1500));
    }
}
