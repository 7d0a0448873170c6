//! Flexible Data Placement: the conformance suite with placement identifiers (every read
//! returns the last write, and no block of a handle holds another handle's data), the log pages
//! and the Reclaim Unit Handle operations, and refusals of identifiers the device does not have.

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::hil::{AdminCommand, AdminResult, HostData, NvmeCommand, Status};
use firmware::platform::StoreChoice;
use firmware::system::System;
use nand::DataTag;
use testkit::{Conformance, Plan};

/// The shared small device (4 dies, 2 planes each) with a 256 KiB cache, `op` spare and `fdp`.
fn device(op: &str, fdp: &str) -> DeviceConfig {
    with_fdp(crate::small_device("fdp", "cache = { capacity = '256KiB' }"), op, fdp)
}

/// `cfg` with `op` spare and FDP configured as `fdp` (an inline table).
fn with_fdp(cfg: DeviceConfig, op: &str, fdp: &str) -> DeviceConfig {
    cfg.set("ftl.op", op).and_then(|c| c.set("ftl.fdp", fdp)).unwrap_or_else(|e| panic!("{e}"))
}

/// Mostly writes over a 10 MB hot region, as the conformance suite's GC plan, each write with
/// one of `pids` (or none).
fn plan(pids: Vec<Option<u16>>) -> Plan {
    Plan {
        rounds: 4,
        clients: 4,
        ops_per_client: 600,
        max_blocks: 64,
        mix: [20, 70, 4, 2, 4],
        span: 20_000,
        pids,
        ..Plan::default()
    }
}

#[test]
fn initially_isolated_two_groups_conform() {
    // Two groups: RGIF 1, so group 1's identifiers have the top bit set.
    let config = device("0.4", "{ handles = 4, reclaim_groups = 2 }");
    let pids = vec![None, Some(0), Some(1), Some(3), Some(0x8001), Some(0x8002)];
    let o = Conformance { config, seed: 61, plan: plan(pids) }.run().unwrap_or_else(|e| panic!("{e}"));
    assert!(o.gc_invocations > 0 && o.blocks_checked > 10_000, "{o:?}");
}

#[test]
fn persistently_isolated_handles_conform_and_never_share_a_block() {
    let config = device("0.4", "{ handles = 4, isolation = 'persistently', ru_blocks = 2 }");
    let pids = vec![None, Some(1), Some(2), Some(3)];
    // The invariants checked after every round include: every valid unit of a block opened for
    // a handle (host data, and GC's copies under persistent isolation) was written under it.
    let o = Conformance { config, seed: 62, plan: plan(pids) }.run().unwrap_or_else(|e| panic!("{e}"));
    assert!(o.gc_invocations > 0, "{o:?}");
}

#[test]
fn fdp_on_every_architecture_conforms() {
    for (i, kind) in ["tradition", "pipessd", "deepflash"].into_iter().enumerate() {
        let cfg = crate::arch_device("fdp", kind, "cache = { capacity = '256KiB' }");
        let config = with_fdp(cfg, "0.4", "{ handles = 3 }");
        let c = Conformance { config, seed: 70 + i as u64, plan: plan(vec![None, Some(1), Some(2)]) };
        c.run().unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

/// Runs `cmd` on queue 1 of `dev` (created already).
fn submit(dev: &Device, cmd: NvmeCommand) -> Status {
    let front = dev.front();
    dev.sim().block_on(async move { front.submit(1, cmd).await.status }).unwrap()
}

fn admin(dev: &Device, cmd: AdminCommand) -> AdminResult {
    let ctl = dev.controller.clone();
    dev.sim().block_on(async move { ctl.admin(cmd).await }).unwrap()
}

/// A write of `units` 4 KiB units at unit `at` with placement identifier `pid`.
fn write(at: u64, units: u32, pid: Option<u16>) -> NvmeCommand {
    let tags = (0..units).map(|i| DataTag(i as u16 + 1)).collect();
    let cmd = NvmeCommand::write(at * 8, units * 8, HostData::Tags(tags));
    match pid {
        Some(p) => cmd.with_pid(p),
        None => cmd,
    }
}

#[test]
fn log_pages_and_reclaim_unit_handle_operations() {
    let cfg = device("0.4", "{ handles = 4, ru_blocks = 1 }");
    let dev = Device::build(&cfg, &StoreChoice::Metadata, 1).unwrap();
    let front = dev.front();
    dev.sim().block_on(async move { front.create_queue(1).await.unwrap() }).unwrap();

    let AdminResult::FdpConfigurations(c) = admin(&dev, AdminCommand::GetFdpConfigurations) else { panic!() };
    let c = &c.configurations[0];
    assert_eq!((c.rgif, c.nrg, c.nruh, c.maxpids), (0, 1, 4, 4));
    // One block in each of the 8 planes: 8 x 16 pages of 16 KiB.
    assert_eq!(c.runs, 8 * 16 * 16384);
    assert_eq!(c.ruh_types, vec![1; 4], "initially isolated");

    // An identifier beyond the handles is refused before any work, and logged.
    assert_eq!(submit(&dev, write(0, 1, Some(4))), Status::InvalidPlacementHandle(4));
    assert_eq!(Status::InvalidPlacementHandle(4).code(), (0, 0x02));
    // 40 units under handle 1 (ten pages), 8 without an identifier (handle 0).
    assert_eq!(submit(&dev, write(0, 40, Some(1))), Status::Success);
    assert_eq!(submit(&dev, write(100, 8, None)), Status::Success);
    assert_eq!(submit(&dev, NvmeCommand::flush()), Status::Success);

    let AdminResult::RuhStatus(s) = admin(&dev, AdminCommand::IoManagementReceive) else { panic!() };
    let ru_lbas = 8 * 16 * 4 * 8; // pages x units x blocks of 512 B
    let ruamw: Vec<u64> = s.iter().map(|d| d.ruamw).collect();
    assert_eq!(ruamw, vec![ru_lbas - 2 * 4 * 8, ru_lbas - 10 * 4 * 8, ru_lbas, ru_lbas]);
    assert_eq!(s.iter().map(|d| d.pid).collect::<Vec<_>>(), [0, 1, 2, 3]);

    let AdminResult::RuhUsage(u) = admin(&dev, AdminCommand::GetRuhUsage) else { panic!() };
    assert_eq!(u.iter().map(|r| r.ruha).collect::<Vec<_>>(), [2, 1, 0, 0], "controller, host, unused");

    let AdminResult::FdpStatistics(st) = admin(&dev, AdminCommand::GetFdpStatistics) else { panic!() };
    assert_eq!(st.hbmw, 48 * 4096);
    assert_eq!(st.mbmw, 48 * 4096, "no GC, no translation pages yet");
    assert_eq!(st.mbe, 0);

    // Handle 1 moves to a fresh reclaim unit; its first was partly written.
    assert_eq!(admin(&dev, AdminCommand::IoManagementSend { pids: vec![1] }), AdminResult::Done);
    let AdminResult::RuhStatus(s) = admin(&dev, AdminCommand::IoManagementReceive) else { panic!() };
    assert_eq!(s[1].ruamw, ru_lbas);
    assert_eq!(
        admin(&dev, AdminCommand::IoManagementSend { pids: vec![2, 9] }),
        AdminResult::Error(Status::InvalidPlacementHandle(9))
    );
    let AdminResult::FdpEvents(ev) = admin(&dev, AdminCommand::GetFdpEvents { host: true }) else { panic!() };
    assert_eq!(ev.iter().map(|e| e.kind).collect::<Vec<_>>(), [0x3, 0x0]);
    assert_eq!((ev[0].pid, ev[1].pid, ev[1].handle), (4, 1, 1));
    assert_eq!(ev[1].units, (8 * 16 - 10) * 4);
    let AdminResult::FdpEvents(ctl) = admin(&dev, AdminCommand::GetFdpEvents { host: false }) else {
        panic!()
    };
    assert!(ctl.is_empty());

    // Writes after the update go on, into new blocks; everything still reads back and the
    // invariants (handles never mixed) hold.
    assert_eq!(submit(&dev, write(200, 8, Some(1))), Status::Success);
    assert_eq!(submit(&dev, NvmeCommand::flush()), Status::Success);
    dev.check_invariants().unwrap();
    let front = dev.front();
    let c =
        dev.sim().block_on(async move { front.submit(1, NvmeCommand::read(200 * 8, 8 * 8)).await }).unwrap();
    assert_eq!(c.data, HostData::Tags((1..=8).map(DataTag).collect()));
    let st = dev.totals().ftl.fdp.unwrap();
    assert_eq!(st.handles[1].host_units, 48);
    assert_eq!(st.handles[0].host_units, 8);
    assert_eq!((st.ruh_updates, st.invalid_pids), (1, 1));
}

#[test]
fn without_fdp_the_log_pages_are_refused_and_identifiers_ignored() {
    let cfg = crate::small_device("plain", "cache = { capacity = '256KiB' }");
    let dev = Device::build(&cfg, &StoreChoice::Metadata, 1).unwrap();
    let front = dev.front();
    dev.sim().block_on(async move { front.create_queue(1).await.unwrap() }).unwrap();
    assert!(matches!(
        admin(&dev, AdminCommand::GetFdpStatistics),
        AdminResult::Error(Status::InvalidField(_))
    ));
    assert!(matches!(
        admin(&dev, AdminCommand::IoManagementSend { pids: vec![0] }),
        AdminResult::Error(Status::InvalidField(_))
    ));
    assert_eq!(submit(&dev, write(0, 1, Some(7))), Status::Success);
    assert!(dev.totals().ftl.fdp.is_none());
    let e = dev.check_placement(firmware::hil::Placement::Pid(1)).unwrap_err().to_string();
    assert!(e.contains("[ftl.fdp]"), "{e}");
}

#[test]
fn jobs_are_checked_against_the_handles_up_front() {
    let cfg = device("0.4", "{ handles = 2, reclaim_groups = 4 }");
    let dev = Device::build(&cfg, &StoreChoice::Metadata, 1).unwrap();
    use firmware::hil::Placement::Pid;
    // Four groups: RGIF 2; group 3 handle 1 is 0xC001.
    assert!(dev.check_placement(Pid(0xC001)).is_ok());
    let e = dev.check_placement(Pid(2)).unwrap_err().to_string();
    assert!(
        e.starts_with("placement pid:2: the device has 2 reclaim unit handles in 4 reclaim groups"),
        "{e}"
    );
    assert!(!e.contains('\n'));
}

#[test]
fn config_errors_name_the_field() {
    let text = |fdp: &str| {
        format!(
            "name = 'x'\n[geometry]\nchannels = 2\nways = 2\nplanes = 2\nblocks = 32\npages = 16\npage_size = '16KiB'\n[controller]\ndram = '64MiB'\n[ftl]\nop = 0.25\ncache = {{ capacity = '256KiB' }}\nfdp = {fdp}\n"
        )
    };
    let err = |fdp: &str| DeviceConfig::from_toml(&text(fdp), "test").unwrap_err().to_string();
    assert!(
        err("{ reclaim_groups = 3 }").contains("fdp.reclaim_groups"),
        "{}",
        err("{ reclaim_groups = 3 }")
    );
    assert!(err("{ handles = 0 }").contains("fdp.handles"));
    assert!(err("{ handles = 8 }").contains("fdp.handles"), "too many frontiers for 8 spare blocks");
    assert!(err("{ ru_blocks = 0 }").contains("fdp.ru_blocks"));
    assert!(err("{ isolation = 'never' }").contains("never"), "{}", err("{ isolation = 'never' }"));
    assert!(err("{ handle = 2 }").contains("handle"));
    for e in ["{ reclaim_groups = 3 }", "{ handles = 0 }", "{ ru_blocks = 0 }"] {
        assert!(!err(e).trim_end().contains('\n'), "{}", err(e));
    }
}

/// Blocks whose programs fail are retired with FDP on, persistently isolated: every read still
/// returns the last write, no handle's block takes another's data, and each relocation out of
/// a retiring block is a Media Reallocated controller event (80h).
#[test]
fn relocations_out_of_failed_blocks_are_media_reallocated_events() {
    let no_bit_errors = "e = 0.0, a = 0.0, k = 1.0, b = 0.0, m = 1.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0";
    let wear = "rated_pe = 1, program_fail_at_rated = 1e-3, erase_fail_at_rated = 1e-2, exponent = 0.0";
    let errors = format!(
        "cache = {{ capacity = '256KiB' }}\n[ecc.errors]\nrber = {{ {no_bit_errors} }}\nwear_out = {{ {wear} }}"
    );
    let config =
        with_fdp(crate::small_device("fdp", &errors), "0.45", "{ handles = 3, isolation = 'persistently' }");
    let dev = Device::build(&config, &StoreChoice::Memory, 63).unwrap();
    Conformance { config, seed: 63, plan: plan(vec![None, Some(1), Some(2)]) }
        .run_on(&dev)
        .unwrap_or_else(|e| panic!("{e}"));
    let m = dev.ftl.stats().media;
    assert!(m.units_relocated > 0, "{m:?}");
    let events = dev.ftl.fdp_events();
    let realloc: Vec<_> = events.iter().filter(|e| e.kind == 0x80).collect();
    assert!(!realloc.is_empty() && realloc.iter().all(|e| !e.is_host_event() && e.units > 0));
    if dev.ftl.stats().fdp.unwrap().events_dropped == 0 {
        assert_eq!(realloc.iter().map(|e| e.units).sum::<u64>(), m.units_relocated);
    }
}

/// A placement identifier's reclaim group keeps its data on the group's dies: with two groups
/// of two dies each, writes to group 1 program only blocks of dies 2 and 3 (planes 4 to 7),
/// writes to group 0 only those of dies 0 and 1.
#[test]
fn reclaim_groups_keep_their_data_on_their_dies() {
    let cfg =
        device("0.4", "{ handles = 2, reclaim_groups = 2 }").set("ftl.mapping", "{ kind = 'full' }").unwrap();
    let dev = Device::build(&cfg, &StoreChoice::Metadata, 1).unwrap();
    let front = dev.front();
    dev.sim().block_on(async move { front.create_queue(1).await.unwrap() }).unwrap();
    let planes_written = |dev: &Device| {
        let geo = dev.ftl.fil().geometry().clone();
        let array = dev.ftl.fil().array().borrow();
        let mut planes: Vec<u32> = (0..geo.total_blocks())
            .filter(|&b| array.block(nand::BlockIdx(b)).write_ptr > 0)
            .map(|b| b / geo.blocks)
            .collect();
        planes.dedup();
        planes
    };
    // 64 writes of 8 units under group 1, handle 1 (RGIF 1: 0x8001).
    for i in 0..64 {
        assert_eq!(submit(&dev, write(i * 8, 8, Some(0x8001))), Status::Success);
    }
    assert_eq!(submit(&dev, NvmeCommand::flush()), Status::Success);
    assert_eq!(planes_written(&dev), [4, 5, 6, 7]);
    for i in 0..64 {
        assert_eq!(submit(&dev, write(1000 + i * 8, 8, Some(0x0001))), Status::Success);
    }
    assert_eq!(submit(&dev, NvmeCommand::flush()), Status::Success);
    assert_eq!(planes_written(&dev), [0, 1, 2, 3, 4, 5, 6, 7]);
    dev.check_invariants().unwrap();
    let AdminResult::RuhStatus(s) = admin(&dev, AdminCommand::IoManagementReceive) else { panic!() };
    assert_eq!(s.iter().map(|d| d.pid).collect::<Vec<_>>(), [0x0000, 0x0001, 0x8000, 0x8001]);
    // Each group's RU is a block in each of its 4 planes (4 x 16 pages of 4 units): the 512
    // units written to each group under handle 1 filled two, and the handle is at a fresh one.
    assert!(s.iter().all(|d| d.ruamw == 4 * 16 * 4 * 8), "{s:?}");
    assert_eq!(dev.totals().ftl.fdp.unwrap().handles[1].reclaim_units, 4);
}
