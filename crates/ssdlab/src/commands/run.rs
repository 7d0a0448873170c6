//! `ssdlab run`: the main job on built-in defaults.
//!
//! Until the firmware above the FIL is in place this runs the flash-interface demo: random
//! page reads, then programs, over every die of the device.

use anyhow::Result;
use host::phys::{PhysOp, PhysPattern, PhysWorkload};

use crate::cli::RunArgs;

pub fn run(a: RunArgs) -> Result<()> {
    for op in [PhysOp::Read, PhysOp::Program] {
        let w = PhysWorkload {
            op,
            pattern: PhysPattern::Random,
            qd: 256,
            count: 50_000,
            ..PhysWorkload::default()
        };
        let report = super::phys::execute(a.device.as_deref(), &w, &a.common)?;
        println!("{report}\n");
    }
    Ok(())
}
