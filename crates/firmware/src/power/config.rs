//! Power parameters: the `[power]` section of a device configuration.
//!
//! Every sub-section is optional. One left out takes the defaults of `defaults.rs` (each cites
//! where its numbers come from, or says it is an assumption); one given must be complete, so a
//! misspelt or forgotten field is an error on its line rather than a silent default.

use nand::CellType;
use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};

use crate::power::defaults;

/// NAND array energy per operation (per plane: a multi-plane operation counts each plane).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandPower {
    /// Energy of one page read (tR), microjoules.
    pub read_uj: f64,
    /// Energy of one page program (tPROG), microjoules.
    pub program_uj: f64,
    /// Energy of one block erase (tBERS), microjoules.
    pub erase_uj: f64,
    /// Standby power of one idle die, milliwatts.
    pub die_idle_mw: f64,
}

/// Flash channel (ONFI bus) transfer energy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelPower {
    /// Energy per byte moved between controller and die, picojoules.
    pub pj_per_byte: f64,
}

/// Controller power: cores (scaled by their clock) and the rest of the chip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerPower {
    /// Power of a busy core per GHz of its clock, milliwatts.
    pub active_mw_per_ghz: f64,
    /// Power of an idle core per GHz of its clock, milliwatts.
    pub idle_mw_per_ghz: f64,
    /// Power of everything else on the board that does not depend on load (PHYs, FPGA fabric,
    /// regulators), watts.
    pub static_w: f64,
}

/// Controller DRAM power.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramPower {
    /// Background power per GiB installed, milliwatts.
    pub mw_per_gib: f64,
    /// Energy per byte of host data passing through DRAM, picojoules.
    pub pj_per_byte: f64,
}

/// Host link (PCIe or SATA PHY) power.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkPower {
    /// Energy per byte on the wire, picojoules.
    pub pj_per_byte: f64,
    /// Power of one idle lane kept up (L0), milliwatts.
    pub idle_mw_per_lane: f64,
}

impl LinkPower {
    /// Joules for `bytes` over the wire and `lanes` kept up for `secs` seconds.
    pub fn energy(&self, bytes: u64, lanes: u32, secs: f64) -> f64 {
        bytes as f64 * self.pj_per_byte * 1e-12 + lanes as f64 * self.idle_mw_per_lane * 1e-3 * secs
    }
}

/// Host power charged to a host-side FTL (reported apart from the device's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostPower {
    /// Power of a busy host core, watts.
    pub core_active_w: f64,
    /// Power of an idle host core the storage stack runs on, watts.
    pub core_idle_w: f64,
    /// Host DRAM power per GiB the storage stack occupies, watts.
    pub dram_w_per_gib: f64,
}

/// The `[power]` section: every sub-section optional (defaults), complete when given.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerConfig {
    /// NAND operations. Default: 3.3 V x 25 mA over Table 1's tR / tPROG / tBERS of the cell
    /// type (see `defaults.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nand: Option<NandPower>,
    /// Channel transfers. Default: 90 pJ/byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<ChannelPower>,
    /// Controller. Default: 130 mW/GHz busy, 30 mW/GHz idle, no static power.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerPower>,
    /// DRAM. Default: 150 mW/GiB and 100 pJ/byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram: Option<DramPower>,
    /// Host link. Default: PCIe 40 pJ/byte and 50 mW per idle lane; SATA 80 pJ/byte, 30 mW.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkPower>,
    /// Host CPU and DRAM (host-side FTLs). Default: 12 W busy, 2 W idle per core, 0.375 W/GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostPower>,
}

/// Every power parameter, defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedPower {
    /// NAND operations.
    pub nand: NandPower,
    /// Channel transfers.
    pub channel: ChannelPower,
    /// Controller.
    pub controller: ControllerPower,
    /// DRAM.
    pub dram: DramPower,
    /// Host link.
    pub link: LinkPower,
    /// Host CPU and DRAM.
    pub host: HostPower,
}

impl PowerConfig {
    /// The parameters with defaults for `cell` NAND and a SATA (`sata`) or PCIe host link.
    pub fn resolve(&self, cell: CellType, sata: bool) -> ResolvedPower {
        ResolvedPower {
            nand: self.nand.clone().unwrap_or_else(|| defaults::nand(cell)),
            channel: self.channel.clone().unwrap_or_else(defaults::channel),
            controller: self.controller.clone().unwrap_or_else(defaults::controller),
            dram: self.dram.clone().unwrap_or_else(defaults::dram),
            link: self.link.clone().unwrap_or_else(|| defaults::link(sata)),
            host: self.host.clone().unwrap_or_else(defaults::host),
        }
    }

    /// The section with every default written out (what `ssdlab config` prints).
    pub fn resolved(&self, cell: CellType, sata: bool) -> PowerConfig {
        let r = self.resolve(cell, sata);
        PowerConfig {
            nand: Some(r.nand),
            channel: Some(r.channel),
            controller: Some(r.controller),
            dram: Some(r.dram),
            link: Some(r.link),
            host: Some(r.host),
        }
    }

    /// Checks that every value given is a finite number, not negative; the error names it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut fields: Vec<(&str, f64)> = Vec::new();
        if let Some(n) = &self.nand {
            fields.extend([
                ("nand.read_uj", n.read_uj),
                ("nand.program_uj", n.program_uj),
                ("nand.erase_uj", n.erase_uj),
                ("nand.die_idle_mw", n.die_idle_mw),
            ]);
        }
        if let Some(c) = &self.channel {
            fields.push(("channel.pj_per_byte", c.pj_per_byte));
        }
        if let Some(c) = &self.controller {
            fields.extend([
                ("controller.active_mw_per_ghz", c.active_mw_per_ghz),
                ("controller.idle_mw_per_ghz", c.idle_mw_per_ghz),
                ("controller.static_w", c.static_w),
            ]);
        }
        if let Some(d) = &self.dram {
            fields.extend([("dram.mw_per_gib", d.mw_per_gib), ("dram.pj_per_byte", d.pj_per_byte)]);
        }
        if let Some(l) = &self.link {
            fields
                .extend([("link.pj_per_byte", l.pj_per_byte), ("link.idle_mw_per_lane", l.idle_mw_per_lane)]);
        }
        if let Some(h) = &self.host {
            fields.extend([
                ("host.core_active_w", h.core_active_w),
                ("host.core_idle_w", h.core_idle_w),
                ("host.dram_w_per_gib", h.dram_w_per_gib),
            ]);
        }
        for (name, v) in fields {
            ensure(v.is_finite() && v >= 0.0, name, || format!("must be a number of at least 0 (got {v})"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_default_by_cell_type_and_must_be_complete_when_given() {
        let p: PowerConfig = toml::from_str("").unwrap();
        let r = p.resolve(CellType::Tlc, false);
        assert!(r.nand.program_uj > p.resolve(CellType::Mlc, false).nand.program_uj);
        let e = toml::from_str::<PowerConfig>("nand = { read_uj = 1.0, program_uj = 2.0 }").unwrap_err();
        assert!(e.to_string().contains("missing field `erase_uj`"), "{e}");
        let p: PowerConfig =
            toml::from_str("channel = { pj_per_byte = -3.0 }").expect("parses; validation rejects it");
        assert_eq!(
            p.validate().unwrap_err().to_string(),
            "channel.pj_per_byte: must be a number of at least 0 (got -3)"
        );
    }
}
