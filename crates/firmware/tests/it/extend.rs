//! Extending the firmware without touching its shared layers: a fifth architecture and a GC
//! victim policy, each a type of this file, built into a device with [`Device::builder`] and
//! run through the conformance suite (every read returns the last write; invariants hold).

use firmware::arch::Architecture;
use firmware::device::Device;
use firmware::flow::Flow;
use firmware::ftl::Policies;
use firmware::ftl::victim::{Candidate, VictimPicker};
use firmware::hil::HilLayout;
use firmware::platform::StoreChoice;
use firmware::system::System;
use rand::RngExt;
use sim::config::{ConfigError, ensure};
use sim::{CoreId, Cx, SimRng};
use testkit::{Conformance, Plan};

/// SoftSSD on two cores: the HIL and FTL coroutines on core 0, the FIL and the ECC sharing
/// core 1 (a cheaper controller than SoftSSD's three cores).
struct TwoCoreSoftssd;

impl Architecture for TwoCoreSoftssd {
    fn name(&self, _cores: usize) -> String {
        "softssd on two cores".into()
    }
    fn validate(&self, cores: usize) -> Result<(), ConfigError> {
        ensure(cores >= 2, "controller.cores", || format!("two cores are needed ({cores} configured)"))
    }
    fn fil_core(&self) -> Option<usize> {
        Some(1)
    }
    fn ecc_core(&self) -> usize {
        1
    }
    fn home_core(&self) -> usize {
        0
    }
    fn layout(&self, cores: &[CoreId]) -> HilLayout {
        HilLayout::Workers { core: cores[0] }
    }
    fn flow(&self, cx: &Cx, _cores: &[CoreId], _logical: u32) -> Flow {
        Flow::plain(cx)
    }
}

/// GC with two random choices: of two candidates drawn at random, the one with fewer valid
/// units (a cheap approximation of greedy that needs no sorted index).
struct TwoChoices;

impl VictimPicker for TwoChoices {
    fn pick(&self, c: &[Candidate], _units_per_block: u32, rng: &mut SimRng) -> usize {
        let (a, b) = (rng.random_range(0..c.len()), rng.random_range(0..c.len()));
        if c[b].valid < c[a].valid { b } else { a }
    }
}

/// The conformance suite's small device with a 256 KiB cache, on `cores` cores.
fn small(cores: usize) -> firmware::config::DeviceConfig {
    let list: Vec<String> = (0..cores).map(|i| format!("{{ name = 'c{i}', clock = '1GHz' }}")).collect();
    crate::small_device("extend", "cache = { capacity = '256KiB' }")
        .set("architecture.ecc_core", "1")
        .and_then(|c| c.set("controller.cores", &format!("[{}]", list.join(", "))))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn plan() -> Plan {
    Plan {
        rounds: 3,
        clients: 4,
        ops_per_client: 500,
        max_blocks: 32,
        mix: [25, 65, 4, 2, 4],
        span: 16_000,
        ..Plan::default()
    }
}

#[test]
fn a_fifth_architecture_conforms_and_reports_its_name() {
    // Firmware costs on the FIL, so that its core's busy time shows where it runs.
    let cfg = small(2).set("fil.dispatch_cycles", "300").unwrap();
    let dev = Device::builder(&cfg)
        .store(StoreChoice::Memory)
        .seed(7)
        .architecture(&TwoCoreSoftssd)
        .build()
        .unwrap();
    let o = Conformance { config: cfg, seed: 7, plan: plan() }.run_on(&dev).unwrap_or_else(|e| panic!("{e}"));
    assert!(o.gc_invocations > 0, "GC ran: {o:?}");
    assert_eq!(dev.totals().architecture, "softssd on two cores");
    let busy: Vec<_> = dev.sim().core_stats().iter().map(|c| c.busy).collect();
    assert!(busy.iter().all(|b| !b.is_zero()), "both cores worked (HIL and FTL; FIL): {busy:?}");
}

#[test]
fn a_new_victim_policy_conforms() {
    let cfg = small(3);
    let policies = Policies { victim: std::rc::Rc::new(TwoChoices), ..Policies::of(&cfg.ftl, &cfg.geometry) };
    let dev = Device::builder(&cfg).store(StoreChoice::Memory).seed(8).policies(policies).build().unwrap();
    let o = Conformance { config: cfg, seed: 8, plan: plan() }.run_on(&dev).unwrap_or_else(|e| panic!("{e}"));
    assert!(o.gc_invocations > 0 && o.blocks_checked > 5_000, "{o:?}");
}
