//! What the host controls: where writes land (a group or a die, seen in the per-die program
//! counts), GC of a block it names, and one-line refusals of places and blocks that do not
//! exist or are in use.

use firmware::hil::{HostData, NvmeCommand, Placement, Status};
use firmware::platform::StoreChoice;
use firmware::system::System;
use hostftl::{GcRequestError, HostFtlSystem};
use nand::DataTag;

/// The small system with its I/O queue 1.
fn system() -> HostFtlSystem {
    let sys = HostFtlSystem::build(&crate::small(""), &StoreChoice::Metadata, 1).unwrap();
    let front = sys.front();
    sys.sim().block_on(async move { front.create_queue(1).await }).unwrap().unwrap();
    sys
}

/// A FUA write of `nlb` 512-byte blocks at `slba` to `placement`, tagged `tag` per unit.
fn write(slba: u64, nlb: u32, tag: u16, placement: Option<Placement>) -> NvmeCommand {
    let mut w = NvmeCommand::write(slba, nlb, HostData::Tags(vec![DataTag(tag); nlb as usize / 8]));
    w.placement = placement;
    w.fua = true;
    w
}

#[test]
fn writes_land_on_the_die_or_group_the_host_names() {
    let sys = system();
    let f = sys.front();
    sys.sim()
        .block_on(async move {
            // 64 KiB (16 units, 4 pages) to die 5; 64 KiB to group 1 (channels 2 and 3).
            assert_eq!(f.submit(1, write(0, 128, 7, Some(Placement::Die(5)))).await.status, Status::Success);
            assert_eq!(
                f.submit(1, write(1024, 128, 8, Some(Placement::Group(1)))).await.status,
                Status::Success
            );
        })
        .unwrap();
    let programs: Vec<u64> = sys.totals().fil.die_ops.iter().map(|o| o[1]).collect();
    assert!(programs[5] >= 4, "die 5 took the 4 pages it was asked to: {programs:?}");
    assert_eq!(programs[..4].iter().sum::<u64>(), 0, "group 0 (dies 0-3) took nothing: {programs:?}");
    assert_eq!(programs[4..].iter().sum::<u64>(), 8, "group 1 took all 8 pages: {programs:?}");
}

#[test]
fn places_that_do_not_exist_are_refused_in_one_line() {
    let sys = system();
    let f = sys.front();
    let (die, group) = sys
        .sim()
        .block_on(async move {
            let die = f.submit(1, write(0, 8, 1, Some(Placement::Die(99)))).await.status;
            let group = f.submit(1, write(0, 8, 1, Some(Placement::Group(7)))).await.status;
            (die, group)
        })
        .unwrap();
    assert_eq!(die, Status::InvalidField("placement die:99: the array has 8 dies (0 to 7)".into()));
    assert_eq!(
        group,
        Status::InvalidField("placement group:7: the array has 2 channel groups (0 to 1)".into())
    );
    assert_eq!(
        sys.check_placement(Placement::Die(8)).unwrap_err().to_string(),
        "placement die:8: the array has 8 dies (0 to 7)"
    );
}

#[test]
fn the_host_collects_a_block_it_names_and_is_refused_one_in_use() {
    let sys = system();
    let (f, ftl) = (sys.front(), sys.ftl.clone());
    // Fill die 0 past one block (16 pages of 4 units), overwrite the first half, then ask for
    // GC of the closed block: its valid units move and the data reads back.
    let (in_use, free, missing, read) = sys
        .sim()
        .block_on(async move {
            for i in 0..20u64 {
                assert_eq!(
                    f.submit(1, write(i * 32, 32, i as u16 + 1, Some(Placement::Die(0)))).await.status,
                    Status::Success
                );
            }
            for i in 0..8u64 {
                assert_eq!(
                    f.submit(1, write(i * 32, 32, 100 + i as u16, Some(Placement::Die(0)))).await.status,
                    Status::Success
                );
            }
            // Die 0's blocks: block 0 is full (closed), the next one is the open frontier.
            let in_use = ftl.collect_block(1).await.unwrap_err();
            let free = ftl.collect_block(5).await.unwrap_err();
            let missing = ftl.collect_block(1 << 20).await.unwrap_err();
            ftl.collect_block(0).await.unwrap();
            let r = f.submit(1, NvmeCommand::read(0, 32 * 20)).await;
            (in_use, free, missing, r.data)
        })
        .unwrap();
    assert_eq!(in_use.to_string(), "GC request for block 1: the block is in use (an open write frontier)");
    assert!(matches!(free, GcRequestError::InUse { block: 5, .. }), "{free}");
    assert_eq!(missing.to_string(), format!("GC request for block {}: the array has 256 blocks", 1 << 20));
    let HostData::Tags(tags) = read else { panic!("tags expected") };
    let want: Vec<DataTag> = (0..20u16)
        .flat_map(|i| std::iter::repeat_n(DataTag(if i < 8 { 100 + i } else { i + 1 }), 4))
        .collect();
    assert_eq!(tags, want);
    assert_eq!(sys.ftl.stats().blocks_erased, 1);
    sys.check_invariants().unwrap();
}

/// Commands writing the same LBAs at once, as fio's jobs do over one region, with GC under
/// way: every command completes, each unit ends as one of the writes, and the maps agree.
/// (The panic this guards against, a unit rewritten by another command between being stamped
/// and being placed, is reproduced end to end by `systems::overlapping_jobs_on_a_host_side_ftl`
/// in the ssdlab crate; this smaller mix does not hit that window.)
#[test]
fn concurrent_writes_of_the_same_lbas_settle_on_one_of_them() {
    let sys = system();
    let f = sys.front();
    let cx = sys.sim().cx();
    let tags = sys
        .sim()
        .block_on(async move {
            // Rounds of 24 writes in flight together, all to group 1 (32 MiB raw), over the
            // same 256 KiB: 64 KiB writes (two super-pages of 2 channels x 4 units) and
            // single units, 72 MiB in all, so that GC runs and writes wait for space while
            // later writes of their units reach flash.
            for round in 0..48u16 {
                let mut runs = Vec::new();
                for k in 0..24u16 {
                    let tag = 10 + round * 24 + k;
                    let (slba, nlb) =
                        if k % 3 == 2 { (8 * (tag as u64 % 64), 8) } else { (128 * (k as u64 % 4), 128) };
                    let mut w = write(slba, nlb, tag, Some(Placement::Group(1)));
                    w.fua = k % 8 == 0;
                    let f = f.clone();
                    runs.push(
                        cx.spawn(sim::CoreId::UNBOUND, "writer", async move { f.submit(1, w).await.status }),
                    );
                }
                for r in runs {
                    assert_eq!(r.await, Status::Success);
                }
            }
            assert_eq!(f.submit(1, NvmeCommand::flush()).await.status, Status::Success);
            f.submit(1, NvmeCommand::read(0, 512)).await.data
        })
        .unwrap();
    let HostData::Tags(tags) = tags else { panic!("tags expected") };
    assert_eq!(tags.len(), 64);
    assert!(
        tags.iter().all(|t| (10..10 + 48 * 24).contains(&t.0)),
        "each unit holds one of the writes: {tags:?}"
    );
    assert!(sys.ftl.stats().gc_invocations > 0, "GC ran");
    sys.check_invariants().unwrap();
}
