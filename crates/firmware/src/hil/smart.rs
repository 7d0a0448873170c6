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
    /// Free blocks as a percentage of the blocks GC keeps in reserve at the soft threshold
    /// (capped at 100).
    pub available_spare: u8,
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
            (Opcode::Write, Status::Success) => {
                self.host_write_commands += 1;
                self.bytes_written += bytes;
            }
            (_, Status::UnrecoveredRead | Status::InternalError(_)) => self.media_errors += 1,
            _ => {}
        }
    }

    /// The log page, given the wear (the erase count of every good block, and the rated
    /// endurance) and the spare blocks as a percentage of those GC keeps in reserve.
    pub fn log(&self, erase_counts: &[u32], endurance: u32, spare_pct: f64) -> SmartLog {
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
            available_spare: spare_pct.round().clamp(0.0, 100.0) as u8,
        }
    }
}
