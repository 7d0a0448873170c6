//! SMART / health counters and the Get Log Page answer built from them.

use serde::Serialize;

use crate::hil::nvme::{NvmeCommand, Opcode, Status};

/// Counters the controller keeps while serving commands.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SmartCounters {
    /// Bytes read by the host.
    pub bytes_read: u64,
    /// Bytes written by the host.
    pub bytes_written: u64,
    /// Read commands completed.
    pub host_read_commands: u64,
    /// Write commands completed.
    pub host_write_commands: u64,
    /// Commands that ended with a media or data-integrity error.
    pub media_errors: u64,
}

/// The SMART / health information log page (the fields ssdlab models).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SmartLog {
    /// Thousands of 512-byte units read (NVMe's data units read).
    pub data_units_read: u64,
    /// Thousands of 512-byte units written.
    pub data_units_written: u64,
    /// Read commands completed.
    pub host_read_commands: u64,
    /// Write commands completed.
    pub host_write_commands: u64,
    /// Media and data-integrity errors.
    pub media_errors: u64,
    /// Estimated life used: mean erase count over rated endurance, in percent (capped at 255).
    pub percentage_used: u8,
    /// Spare capacity left, in percent: the worst plane's spare blocks above the level at
    /// which the device goes read-only, over a plane's with no bad blocks (see `ftl::retire`).
    pub available_spare: u8,
    /// The available spare below which the critical warning's spare bit is set: 10 (%).
    #[serde(default = "spare_threshold")]
    pub available_spare_threshold: u8,
    /// NVMe's critical warning bits: 0x01 available spare below its threshold, 0x04
    /// reliability degraded and 0x08 media read-only (both set when the spares ran out).
    #[serde(default)]
    pub critical_warning: u8,
}

/// The available spare threshold ssdlab reports, percent.
pub const SPARE_THRESHOLD: u8 = 10;

fn spare_threshold() -> u8 {
    SPARE_THRESHOLD
}

impl SmartCounters {
    /// Counts a completed command (`lba_bytes` per logical block): a successful read or write
    /// adds a command and its bytes; a media or data-integrity error (an unrecovered read, an
    /// internal error) adds a media error; anything else (a malformed command) adds nothing.
    pub fn account(&mut self, cmd: &NvmeCommand, status: &Status, lba_bytes: u32) {
        let bytes = cmd.nlb as u64 * lba_bytes as u64;
        match (cmd.opcode, status) {
            (Opcode::Read, Status::Success) => {
                self.host_read_commands += 1;
                self.bytes_read += bytes;
            }
            (Opcode::Write | Opcode::ZoneAppend, Status::Success) => {
                self.host_write_commands += 1;
                self.bytes_written += bytes;
            }
            (_, Status::UnrecoveredRead | Status::InternalError(_)) => self.media_errors += 1,
            _ => {}
        }
    }

    /// The log page, given the wear (the erase count of every good block, and the rated
    /// endurance), the available spare in percent, and whether the media is read-only.
    pub fn log(&self, erase_counts: &[u32], endurance: u32, spare_pct: f64, read_only: bool) -> SmartLog {
        let available_spare = spare_pct.round().clamp(0.0, 100.0) as u8;
        let critical_warning = if available_spare < SPARE_THRESHOLD { 0x01 } else { 0 }
            | if read_only { 0x04 | 0x08 } else { 0 };
        let mean_erases =
            erase_counts.iter().map(|&e| e as f64).sum::<f64>() / erase_counts.len().max(1) as f64;
        let units = |bytes: u64| (bytes / 512).div_ceil(1000);
        SmartLog {
            data_units_read: units(self.bytes_read),
            data_units_written: units(self.bytes_written),
            host_read_commands: self.host_read_commands,
            host_write_commands: self.host_write_commands,
            media_errors: self.media_errors,
            percentage_used: (mean_erases / endurance.max(1) as f64 * 100.0).round().min(255.0) as u8,
            available_spare,
            available_spare_threshold: SPARE_THRESHOLD,
            critical_warning,
        }
    }
}
