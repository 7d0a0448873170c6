//! Default power parameters and where each comes from. Numbers marked "assumption" have no
//! single published source; they are typical values of the part class, stated so that a user
//! with a datasheet can replace them.

use nand::CellType;

use crate::power::config::{ChannelPower, ControllerPower, DramPower, HostPower, LinkPower, NandPower};

/// NAND supply voltage, volts (ONFI VCC).
const VCC: f64 = 3.3;
/// Array current during read, program and erase, amperes: 25 mA is the typical ICC1 / ICC2 /
/// ICC3 of ONFI-class NAND datasheets (Micron MT29F MLC families: 25 mA typical, 50 mA max).
const ICC: f64 = 0.025;

/// Energy per operation = VCC x ICC x the operation's time, with the times of the Host-FTL
/// array paper's Table 1 (PRESETS.md: SLC 25 / 260 / 1500 us, MLC 50 / 580 / 2800 us, TLC 75 /
/// 840 / 4200 us). QLC is not in Table 1: 130 / 2000 / 6000 us, the middle of ssdlab's QLC
/// timing defaults (assumption). Idle die: 0.1 mW (ISB ~30 uA at 3.3 V, datasheet standby).
pub fn nand(cell: CellType) -> NandPower {
    let (read_us, prog_us, erase_us) = match cell {
        CellType::Slc => (25.0, 260.0, 1500.0),
        CellType::Mlc => (50.0, 580.0, 2800.0),
        CellType::Tlc => (75.0, 840.0, 4200.0),
        CellType::Qlc => (130.0, 2000.0, 6000.0),
    };
    let uj = |us: f64| VCC * ICC * us;
    NandPower { read_uj: uj(read_us), program_uj: uj(prog_us), erase_uj: uj(erase_us), die_idle_mw: 0.1 }
}

/// 90 pJ per byte: ONFI NV-DDR2 I/O at VCCQ 1.8 V drawing ~20 mA (typical ICCQ) at 400 MT/s
/// (assumption from the datasheet class).
pub fn channel() -> ChannelPower {
    ChannelPower { pj_per_byte: 90.0 }
}

/// 130 mW/GHz busy, 30 mW/GHz idle: an ARM Cortex-A53-class core at 28 nm (ARM's published
/// ~0.1-0.15 mW/MHz dynamic power; idle share an assumption). No static board power unless a
/// preset says so.
pub fn controller() -> ControllerPower {
    ControllerPower { active_mw_per_ghz: 130.0, idle_mw_per_ghz: 30.0, static_w: 0.0 }
}

/// 150 mW per GiB background and 100 pJ per byte accessed: DDR3/DDR4 at typical utilisation
/// (Micron TN-41-01 / TN-40-07 power calculators, rounded; assumption for the workload mix).
pub fn dram() -> DramPower {
    DramPower { mw_per_gib: 150.0, pj_per_byte: 100.0 }
}

/// PCIe Gen3 SerDes ~5 pJ/bit (40 pJ/byte) and 50 mW per lane held in L0; SATA 6 Gb/s PHY
/// ~10 pJ/bit (80 pJ/byte) and 30 mW idle (assumptions from published SerDes figures).
pub fn link(sata: bool) -> LinkPower {
    if sata {
        LinkPower { pj_per_byte: 80.0, idle_mw_per_lane: 30.0 }
    } else {
        LinkPower { pj_per_byte: 40.0, idle_mw_per_lane: 50.0 }
    }
}

/// 12 W per busy core, 2 W idle: a server core of the PCIe study's era (95 W TDP over 8 cores,
/// idle in shallow C-states; assumption). 0.375 W per GiB: DDR3 RDIMMs at ~3 W per 8 GiB.
pub fn host() -> HostPower {
    HostPower { core_active_w: 12.0, core_idle_w: 2.0, dram_w_per_gib: 0.375 }
}
