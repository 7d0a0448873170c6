//! The shared conformance suite through the host-side FTL: random commands from concurrent
//! clients against the shadow store, invariants between rounds, GC under way.

use firmware::platform::StoreChoice;
use hostftl::HostFtlSystem;
use testkit::{Conformance, Plan};

fn gc_plan() -> Plan {
    Plan {
        rounds: 4,
        clients: 4,
        ops_per_client: 600,
        max_blocks: 64,
        mix: [20, 70, 4, 2, 4],
        span: 12_000,
        ..Plan::default()
    }
}

fn run(extra: &str, seed: u64, plan: Plan) -> testkit::Outcome {
    let cfg = crate::small(extra);
    let sys = HostFtlSystem::build(&cfg, &StoreChoice::Memory, seed).unwrap();
    let c = Conformance { config: cfg, seed, plan };
    c.run_on(&sys).unwrap_or_else(|e| panic!("host-ftl conformance [{extra}]: {e}"))
}

#[test]
fn greedy_gc_with_deferral() {
    let o = run("", 1, gc_plan());
    assert!(o.gc_invocations > 0, "GC never ran: {o:?}");
    assert!(o.blocks_checked > 10_000, "{o:?}");
}

#[test]
fn cost_benefit_gc_without_deferral_whole_namespace() {
    let extra = "gc = { victim = 'cost-benefit' }\n[system.gc]\ndefer = false";
    run(extra, 2, gc_plan());
    run(extra, 3, Plan { rounds: 2, clients: 6, ops_per_client: 150, ..Plan::default() });
}

#[test]
fn super_page_writes_everywhere() {
    let o = run("[system.write]\nmode = 'super-page'", 4, gc_plan());
    assert!(o.gc_invocations > 0, "{o:?}");
}

#[test]
fn a_host_write_buffer() {
    let o = run("[system.write]\nbuffer = '512KiB'", 5, gc_plan());
    assert!(o.gc_invocations > 0, "{o:?}");
}
