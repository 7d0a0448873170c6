//! FIL timing against hand-computed values (PipeSSD flash timing: setup c_r = 3 us,
//! tR = 40 us, tPROG = 400 us, program setup c_w = 5 us, transfer X = 60 us).

use firmware::fil::{FilConfig, FlashRequest, TxnSource};
use nand::{BlockIdx, DieIdx, PageIdx};
use sim::{SimDuration, SimTime};

use crate::{Bench, geo_one_channel, pipessd_timing};

fn us(v: u64) -> SimTime {
    SimTime::from_nanos(v * 1000)
}

fn no_multi_plane() -> FilConfig {
    FilConfig { multi_plane: false, ..FilConfig::default() }
}

#[test]
fn one_read_on_an_idle_die_takes_setup_plus_tr_plus_transfer() {
    let b = Bench::new(geo_one_channel(), pipessd_timing(), FilConfig::default());
    let page = PageIdx(5);
    b.prefill(&(0..6).map(PageIdx).collect::<Vec<_>>());
    let r = b.run_all(vec![FlashRequest::read(TxnSource::User, page)]);
    let t = &r[0].timing;
    assert_eq!(t.completed, us(3 + 40 + 60));
    assert_eq!(t.command(), SimDuration::from_micros(43));
    assert_eq!(t.transfer(), SimDuration::from_micros(60));
    assert_eq!(t.queue_wait(), SimDuration::ZERO);
    assert_eq!(t.channel_wait(), SimDuration::ZERO);
}

#[test]
fn reads_to_dies_of_one_channel_overlap_tr_but_serialise_transfers() {
    // Four dies share the channel. Setups go one after another (3 us each); each die's tR
    // overlaps the others'; die 0's data is ready at 43 us and takes the bus until 103 us;
    // dies 1-3 are ready at 46, 49, 52 us but wait for the bus: 103-163, 163-223, 223-283.
    let b = Bench::new(geo_one_channel(), pipessd_timing(), FilConfig::default());
    let geo = b.fil.geometry().clone();
    let pages: Vec<PageIdx> = (0..4).map(|d| geo.page_of(geo.block_idx(DieIdx(d), 0, 0), 0)).collect();
    b.prefill(&pages);
    let r = b.run_all(pages.iter().map(|&p| FlashRequest::read(TxnSource::User, p)).collect());
    let done: Vec<SimTime> = r.iter().map(|x| x.timing.completed).collect();
    assert_eq!(done, vec![us(103), us(163), us(223), us(283)]);
    let dispatched: Vec<SimTime> = r.iter().map(|x| x.timing.dispatched).collect();
    assert_eq!(dispatched, vec![us(0), us(3), us(6), us(9)]);
    assert_eq!(r[3].timing.channel_wait(), SimDuration::from_micros(223 - 52));
    let st = b.fil.stats();
    assert_eq!(st.channel_busy_ns[0], 4 * (3_000 + 60_000));
}

#[test]
fn multi_plane_reads_share_setup_and_tr_then_transfer_plane_by_plane() {
    let geo = geo_one_channel();
    let p0 = geo.page_of(BlockIdx(0), 7); // die 0, plane 0
    let p1 = geo.page_of(geo.block_idx(DieIdx(0), 1, 3), 7); // die 0, plane 1, same offset
    let reqs = || vec![FlashRequest::read(TxnSource::User, p0), FlashRequest::read(TxnSource::User, p1)];

    let b = Bench::new(geo.clone(), pipessd_timing(), FilConfig::default());
    b.prefill(&(0..8).map(|i| geo.page_of(BlockIdx(0), i)).collect::<Vec<_>>());
    b.prefill(&(0..8).map(|i| geo.page_of(geo.block_idx(DieIdx(0), 1, 3), i)).collect::<Vec<_>>());
    let r = b.run_all(reqs());
    // One batch: 3 us setup, one 40 us tR, then plane 0 out (43-103) and plane 1 out (103-163).
    assert_eq!(r[0].timing.xfer_end, us(103));
    assert_eq!(r[1].timing.xfer_end, us(163));
    assert_eq!(r[1].timing.completed, us(163));
    assert_eq!(b.fil.stats().multi_plane_txns, 2);

    let b = Bench::new(geo.clone(), pipessd_timing(), no_multi_plane());
    b.prefill(&(0..8).map(|i| geo.page_of(BlockIdx(0), i)).collect::<Vec<_>>());
    b.prefill(&(0..8).map(|i| geo.page_of(geo.block_idx(DieIdx(0), 1, 3), i)).collect::<Vec<_>>());
    let r = b.run_all(reqs());
    // Without batching the die does the two reads one after the other: 103 + 103 us.
    assert_eq!(r[1].timing.completed, us(206));
}

#[test]
fn multi_plane_program_loads_both_planes_then_programs_once() {
    let geo = geo_one_channel();
    let pages = [geo.page_of(BlockIdx(0), 0), geo.page_of(geo.block_idx(DieIdx(0), 1, 0), 0)];
    let b = Bench::new(geo.clone(), pipessd_timing(), FilConfig::default());
    let write = || firmware::fil::PageWrite { oob: nand::Oob::empty(4), data: None };
    let r = b.run_all(pages.iter().map(|&p| FlashRequest::program(TxnSource::User, p, write())).collect());
    // 5 us setup, 60 us data in per plane, one 400 us tPROG.
    assert_eq!(r[0].timing.xfer_end, us(65));
    assert_eq!(r[1].timing.xfer_end, us(125));
    assert_eq!(r[1].timing.completed, us(525));
    assert_eq!(r[0].timing.completed, us(525));
}

#[test]
fn erase_takes_setup_plus_tbers() {
    let geo = geo_one_channel();
    let mut t = pipessd_timing();
    t.t_erase = Some(SimDuration::from_millis(3));
    let b = Bench::new(geo.clone(), t, FilConfig::default());
    let r = b.run_all(vec![FlashRequest::erase(TxnSource::Gc, geo.page_of(BlockIdx(2), 0))]);
    assert_eq!(r[0].timing.completed, us(1 + 3000));
    assert_eq!(b.fil.array().borrow().block(BlockIdx(2)).erase_count, 1);
}

#[test]
fn reads_are_served_before_writes_on_a_busy_die() {
    // Die 0 is busy with a read when a program and a second read queue behind it: the read
    // goes next (user-read outranks user-write), though the program arrived first.
    let geo = geo_one_channel();
    let b = Bench::new(geo.clone(), pipessd_timing(), no_multi_plane());
    b.prefill(&[geo.page_of(BlockIdx(0), 0), geo.page_of(BlockIdx(0), 1)]);
    let write = firmware::fil::PageWrite { oob: nand::Oob::empty(4), data: None };
    let r = b.run_all(vec![
        FlashRequest::read(TxnSource::User, geo.page_of(BlockIdx(0), 0)),
        FlashRequest::program(TxnSource::User, geo.page_of(BlockIdx(1), 0), write),
        FlashRequest::read(TxnSource::User, geo.page_of(BlockIdx(0), 1)),
    ]);
    assert_eq!(r[0].timing.completed, us(103));
    assert_eq!(r[2].timing.dispatched, us(103));
    assert_eq!(r[2].timing.completed, us(206));
    assert_eq!(r[1].timing.dispatched, us(206));
}

#[test]
fn mlc_program_latency_shows_lsb_msb_steps() {
    // 64 programs through one block of an MLC die: LSB pages take 290 us, MSB pages 870 us.
    let geo = geo_one_channel();
    let t = nand::Timing { cell: nand::CellType::Mlc, ..pipessd_timing() };
    let t = nand::Timing { t_prog: None, ..t };
    let b = Bench::new(geo.clone(), t, no_multi_plane());
    let write = || firmware::fil::PageWrite { oob: nand::Oob::empty(4), data: None };
    b.run_all(
        (0..64)
            .map(|i| FlashRequest::program(TxnSource::User, geo.page_of(BlockIdx(0), i), write()))
            .collect(),
    );
    let st = b.fil.stats();
    let (lsb, msb) = (&st.program_by_page_type[0], &st.program_by_page_type[1]);
    assert_eq!(lsb.0, nand::PageType::Lsb);
    assert_eq!((lsb.1.count(), msb.1.count()), (32, 32));
    // Command phase = setup (5 us) + tPROG; the data-in is the transfer phase.
    assert!((lsb.1.quantile(0.5) as f64 / 295_000.0 - 1.0).abs() < 1e-3);
    assert!((msb.1.quantile(0.5) as f64 / 875_000.0 - 1.0).abs() < 1e-3);
    // The overall program-latency histogram is bimodal: two clusters, nothing in between.
    let buckets = st.program.command.buckets();
    assert!(
        buckets
            .iter()
            .all(|&(v, _)| (v as f64 / 295_000.0 - 1.0).abs() < 1e-3
                || (v as f64 / 875_000.0 - 1.0).abs() < 1e-3),
        "{buckets:?}"
    );
}

#[test]
fn a_die_busy_without_a_pause_shows_its_busy_time_before_it_goes_idle() {
    // With cache program the next page loads while the array programs the last, so a stream of
    // programs keeps the die busy without a gap. Its busy time used to reach the statistics only
    // when the die went idle: read mid-stream (as a run that ends with write-backs in flight
    // does) it was 0.
    let geo = geo_one_channel();
    let timing = nand::Timing { cache_program: true, ..pipessd_timing() };
    let b = Bench::new(geo.clone(), timing, no_multi_plane());
    let cx = b.sim.cx();
    for p in 0..8 {
        let fil = b.fil.clone();
        let page = geo.page_of(BlockIdx(0), p);
        cx.spawn(sim::CoreId::UNBOUND, format!("program {p}"), async move {
            let write = firmware::fil::PageWrite { oob: nand::Oob::empty(4), data: None };
            fil.submit(FlashRequest::program(TxnSource::User, page, write)).await;
        });
    }
    // 8 programs of 400 us each take more than 3 ms; look at 2 ms, with the die still busy.
    b.sim.run_until(us(2000)).unwrap();
    let busy = b.fil.stats().die_utilisation(SimDuration::from_millis(2))[0];
    assert!(busy > 0.7, "die 0 busy {busy:.2} of the first 2 ms of an unbroken program stream");
}
