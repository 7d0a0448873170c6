//! Crash cycles: the array over a NAND image, writers with flushes and FUA writes, dropped at
//! random instants (the SRAM pool and everything not yet programmed lost) or shut down
//! cleanly; the map is rebuilt from the OOB each time and must give back what the crash
//! oracle allows.

use firmware::config::DeviceConfig;
use firmware::system::System;
use hostftl::HostFtlSystem;
use testkit::crash::{CrashPlan, Reopen, Reopened, crash_cycles};

struct Image {
    cfg: DeviceConfig,
    path: std::path::PathBuf,
    /// The last stop was a clean shutdown.
    clean: bool,
}

impl Reopen for Image {
    fn open(&mut self, seed: u64) -> Result<(Box<dyn System>, Reopened), String> {
        let (sys, created) =
            HostFtlSystem::open_image(&self.cfg, &self.path, seed).map_err(|e| e.to_string())?;
        let how = match (created, std::mem::take(&mut self.clean)) {
            (true, _) => Reopened::Created,
            (false, true) => Reopened::Clean,
            (false, false) => Reopened::Recovered,
        };
        Ok((Box::new(sys), how))
    }

    fn checkpoint(&mut self, sys: &dyn System) -> Result<(), firmware::system::SystemError> {
        sys.checkpoint()?;
        self.clean = true;
        Ok(())
    }
}

#[test]
fn the_map_is_rebuilt_from_the_oob_after_crashes_at_random_instants() {
    let dir = tempfile::tempdir().unwrap();
    let mut image = Image { cfg: crate::small(""), path: dir.path().join("array.img"), clean: false };
    let plan = CrashPlan { cycles: 20, seed: 3, ..CrashPlan::default() };
    let o = crash_cycles(&plan, &mut image).unwrap_or_else(|e| panic!("{e}"));
    assert!(o.recovered >= 12 && o.clean >= 3, "{o:?}");
    assert!(o.written_blocks > o.blocks / 2, "too little written to test anything: {o:?}");
}

#[test]
fn a_host_write_buffer_loses_only_what_was_not_flushed() {
    let dir = tempfile::tempdir().unwrap();
    // One command slot per controller: two flushers, so that units wait in the buffer and a
    // flush must drain it.
    let array = "{ channels_per_controller = 2, slots = 1, sram = '1MiB' }";
    let cfg = crate::small_array(array, "[system.write]\nbuffer = '1MiB'");
    let mut image = Image { cfg, path: dir.path().join("array.img"), clean: false };
    let plan = CrashPlan { cycles: 10, seed: 4, ..CrashPlan::default() };
    let o = crash_cycles(&plan, &mut image).unwrap_or_else(|e| panic!("{e}"));
    assert!(o.recovered >= 6 && o.clean >= 1, "{o:?}");
}
