//! The conformance suite on the SoftSSD architecture, for each policy combination, with fixed
//! seeds. A failure message starts with the seed that reproduces it.

use firmware::config::DeviceConfig;
use testkit::{Conformance, Plan};

/// The shared small device with a 256 KiB cache (unless `ftl` configures one) and `ftl`.
fn device(ftl: &str) -> DeviceConfig {
    let cache = if ftl.contains("cache") { "" } else { "cache = { capacity = '256KiB' }" };
    crate::small_device("conformance", &format!("{cache}\n{ftl}"))
}

fn run(ftl: &str, seed: u64, plan: Plan) -> testkit::Outcome {
    let c = Conformance { config: device(ftl), seed, plan };
    c.run().unwrap_or_else(|e| panic!("conformance [{ftl}]: {e}"))
}

/// Mostly writes over a 10 MB hot region: about 100 MB written, so every block of the 64 MiB
/// device is erased a few times.
fn gc_plan() -> Plan {
    Plan {
        rounds: 4,
        clients: 4,
        ops_per_client: 600,
        max_blocks: 64,
        mix: [20, 70, 4, 2, 4],
        span: 20_000,
        ..Plan::default()
    }
}

#[test]
fn dftl_static_cwdp_greedy() {
    let o = run("mapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 16 }", 1, gc_plan());
    assert!(o.gc_invocations > 0, "GC never ran: {o:?}");
    assert!(o.blocks_checked > 10_000, "{o:?}");
}

#[test]
fn full_map_least_busy_cost_benefit() {
    let o = run(
        "mapping = { kind = 'full' }\nallocation = { kind = 'least-busy' }\ngc = { victim = 'cost-benefit' }",
        2,
        gc_plan(),
    );
    assert!(o.gc_invocations > 0, "{o:?}");
}

#[test]
fn dftl_least_utilised_random_victims() {
    let o = run(
        "mapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 1 }\nallocation = { kind = 'least-utilised' }\ngc = { victim = 'random' }",
        3,
        gc_plan(),
    );
    assert!(o.gc_invocations > 0, "{o:?}");
}

#[test]
fn pcwd_fifo_static_wear_levelling_no_read_allocate() {
    let o = run(
        "allocation = { kind = 'static', order = 'PCWD' }\ngc = { victim = 'fifo' }\nwl = { dynamic = true, static_threshold = 2 }\ncache = { capacity = '256KiB', read_allocate = false }",
        4,
        gc_plan(),
    );
    assert!(o.gc_invocations > 0, "{o:?}");
}

#[test]
fn factory_bad_blocks_are_never_used() {
    let o = run("bad_block_rate = 0.02", 5, gc_plan());
    assert!(o.gc_invocations > 0, "{o:?}");
}

#[test]
fn whole_namespace_random_commands() {
    run("", 6, Plan { rounds: 2, clients: 6, ops_per_client: 150, ..Plan::default() });
}

/// Every architecture over the same FTL, with two policy combinations each: reads return the
/// last write, and the invariants hold, whatever core does the work and whatever waits on
/// which lock.
#[test]
fn every_architecture_conforms() {
    let policies = [
        "mapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 16 }",
        "mapping = { kind = 'full' }\nallocation = { kind = 'least-busy' }\ngc = { victim = 'cost-benefit' }",
    ];
    for (i, kind) in ["tradition", "pipessd", "deepflash"].into_iter().enumerate() {
        for (j, ftl) in policies.iter().enumerate() {
            let cache = "cache = { capacity = '256KiB' }";
            let config = crate::arch_device("conformance", kind, &format!("{cache}\n{ftl}"));
            let seed = 20 + (i * policies.len() + j) as u64;
            let o = Conformance { config, seed, plan: gc_plan() }
                .run()
                .unwrap_or_else(|e| panic!("conformance [{kind}, {ftl}]: {e}"));
            assert!(o.gc_invocations > 0 && o.blocks_checked > 10_000, "{kind}: {o:?}");
        }
    }
}

/// A hot region read and written by every client at once: requests collide on cache lines, so
/// Tradition's line locks and PipeSSD's wait list both come into play, and data stays right.
#[test]
fn colliding_requests_keep_their_order_on_every_architecture() {
    for kind in ["softssd", "tradition", "pipessd", "deepflash"] {
        let config = crate::arch_device("collisions", kind, "cache = { capacity = '256KiB' }");
        let plan = Plan {
            rounds: 3,
            clients: 8,
            ops_per_client: 300,
            max_blocks: 16,
            mix: [45, 45, 3, 2, 5],
            span: 512,
            ..Plan::default()
        };
        Conformance { config, seed: 40, plan }.run().unwrap_or_else(|e| panic!("collisions [{kind}]: {e}"));
    }
}

/// Writes that find no plane with room wait for GC, and wake when a plane gains room they can
/// use, not at every erase: with 16 clients writing over the whole namespace of a device with
/// 20% over-provisioning, many writes wait, and each is woken a few times at most (it was woken
/// at every erase anywhere: 3.9 times per waiting write on this device; 1.2 with room alone;
/// 2.4 since writes also wait for GC to admit them, woken one per page of allowance earned,
/// which another write or a translation page may take first).
#[test]
fn a_write_waiting_for_room_wakes_when_a_plane_gains_room_for_it() {
    let plan = Plan {
        rounds: 3,
        clients: 16,
        ops_per_client: 400,
        max_blocks: 64,
        mix: [5, 90, 1, 1, 3],
        span: 0,
        ..Plan::default()
    };
    let config = device("mapping = { kind = 'full' }").set("ftl.op", "0.2").unwrap_or_else(|e| panic!("{e}"));
    let c = Conformance { config, seed: 7, plan };
    let o = c.run().unwrap_or_else(|e| panic!("{e}"));
    assert!(o.foreground_waits > 100, "few writes waited for GC, so this tests nothing: {o:?}");
    assert!(o.room_wakeups <= 3 * o.foreground_waits, "woken more than a few times per wait: {o:?}");
}

/// Blocks whose programs and erases fail (a wear-out far steeper than any real one, so that
/// dozens fail in a short run) are retired: a failed program's data is written again, the
/// block's other data moves out, and every read still returns the last write.
#[test]
fn grown_bad_blocks_are_retired_without_losing_data() {
    let no_bit_errors = "e = 0.0, a = 0.0, k = 1.0, b = 0.0, m = 1.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0";
    let wear = "rated_pe = 1, program_fail_at_rated = 1e-3, erase_fail_at_rated = 1e-2, exponent = 0.0";
    for (seed, ftl) in [
        (50, "mapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 16 }"),
        (51, "mapping = { kind = 'full' }\ngc = { victim = 'cost-benefit' }"),
    ] {
        let errors = format!("\n[ecc.errors]\nrber = {{ {no_bit_errors} }}\nwear_out = {{ {wear} }}");
        // 35% over-provisioning: 11 spare blocks a plane, 5 above the end-of-life level.
        let config =
            device(&format!("{ftl}{errors}")).set("ftl.op", "0.35").unwrap_or_else(|e| panic!("{e}"));
        let dev = firmware::device::Device::build(&config, &firmware::platform::StoreChoice::Memory, seed)
            .unwrap_or_else(|e| panic!("{e}"));
        let o = Conformance { config, seed, plan: gc_plan() }
            .run_on(&dev)
            .unwrap_or_else(|e| panic!("grown bad blocks [{ftl}]: {e}"));
        let m = dev.ftl.stats().media;
        assert!(m.program_failures > 0 && m.erase_failures > 0, "seed {seed}: {m:?} {o:?}");
        assert!(m.grown_bad_blocks >= m.erase_failures, "seed {seed}: {m:?}");
        assert!(m.units_relocated > 0, "a retiring block's data moved: {m:?}");
        assert!(m.read_only_at.is_none(), "seed {seed}: spares left: {m:?}");
        let bad = dev.ftl.fil().array().borrow().blocks().iter().filter(|b| b.bad).count() as u64;
        assert_eq!(bad, m.grown_bad_blocks, "retired blocks are marked bad in the array");
    }
}
