//! Integration tests of the bridge-based device (BSSD): the conformance suite through the bridge (every SSD behind
//! it keeps its invariants), crash cycles over one NAND image per SSD, and the striping seen
//! from the SSDs' counters.

use bridge::BridgeSystem;
use firmware::config::DeviceConfig;
use firmware::device::OpenedAs;
use firmware::platform::StoreChoice;
use firmware::system::System;
use testkit::crash::{CrashPlan, Reopen, Reopened, crash_cycles};
use testkit::{Conformance, Plan, small_device};

/// Three of the shared small SSDs behind a bridge, striped every 16 KiB, with `ftl`.
fn bridge(ftl: &str) -> DeviceConfig {
    let mut text = small_device("bssd", ftl).to_toml();
    text.push_str("\n[system]\nkind = \"bridge\"\ndrives = 3\nstripe = \"16KiB\"\n");
    DeviceConfig::from_toml(&text, "bssd").unwrap_or_else(|e| panic!("{e}"))
}

const FTL: &str =
    "cache = { capacity = '256KiB' }\nmapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 16 }";

#[test]
fn conformance_through_the_bridge() {
    let cfg = bridge(FTL);
    let plan = Plan {
        rounds: 4,
        clients: 4,
        ops_per_client: 500,
        max_blocks: 96,
        mix: [20, 70, 4, 2, 4],
        span: 40_000,
        ..Plan::default()
    };
    let sys = BridgeSystem::build(&cfg, &StoreChoice::Memory, 11).unwrap();
    let c = Conformance { config: cfg, seed: 11, plan };
    let o = c.run_on(&sys).unwrap_or_else(|e| panic!("bridge conformance: {e}"));
    assert!(o.gc_invocations > 0, "GC never ran in any drive: {o:?}");
    // Striping: every drive took a share of the writes.
    for (k, d) in sys.drives.iter().enumerate() {
        assert!(d.ftl.stats().host_units_written > 1000, "drive {k} barely written");
    }
}

struct Images {
    cfg: DeviceConfig,
    path: std::path::PathBuf,
}

impl Reopen for Images {
    fn open(&mut self, seed: u64) -> Result<(Box<dyn System>, Reopened), String> {
        let (sys, opened) =
            BridgeSystem::open_images(&self.cfg, &self.path, seed).map_err(|e| e.to_string())?;
        let how = if opened.iter().all(|o| o.how == OpenedAs::Created) {
            Reopened::Created
        } else if opened.iter().all(|o| o.how == OpenedAs::Clean) {
            Reopened::Clean
        } else {
            Reopened::Recovered
        };
        Ok((Box::new(sys), how))
    }

    fn checkpoint(&mut self, sys: &dyn System) -> Result<(), firmware::system::SystemError> {
        sys.checkpoint()
    }
}

#[test]
fn every_drive_recovers_from_crashes_at_random_instants() {
    let dir = tempfile::tempdir().unwrap();
    // A larger write cache than the conformance run's: dirty data lingers in every drive, so a
    // flush that missed one would lose acknowledged data.
    let ftl =
        "cache = { capacity = '2MiB' }\nmapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 16 }";
    let mut images = Images { cfg: bridge(ftl), path: dir.path().join("bssd.img") };
    let plan = CrashPlan { cycles: 15, seed: 5, ..CrashPlan::default() };
    let o = crash_cycles(&plan, &mut images).unwrap_or_else(|e| panic!("{e}"));
    assert!(o.recovered >= 9 && o.clean >= 3, "{o:?}");
    assert!(o.written_blocks > o.blocks / 2, "too little written to test anything: {o:?}");
}
