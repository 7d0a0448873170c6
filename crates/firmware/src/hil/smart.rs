//! SMART / health counters and the Get Log Page answer built from them.

use serde::Serialize;

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
    /// The log page, given the wear and spare measurements.
    pub fn log(&self, mean_erases: f64, endurance: u32, spare_pct: f64) -> SmartLog {
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
