//! Saturation bandwidths of the physical driver against the analytic bounds.

use firmware::config::DeviceConfig;
use firmware::platform::{Platform, StoreChoice};
use host::phys::{self, PhysOp, PhysReport, PhysWorkload};

/// PipeSSD flash timing (read 3 + 40 + 60 us, program 5 + 400 + 60 us) on `channels` x `ways`
/// single-die, single-plane chips.
fn device(channels: u32, ways: u32, cache_program: bool) -> DeviceConfig {
    let text = format!(
        r#"
name = "bounds"
[geometry]
channels = {channels}
ways = {ways}
blocks = 16
pages = 64
page_size = "16KiB"
[timing]
cell = "slc"
t_read = "40us"
t_prog = "400us"
t_cmd_read = "3us"
t_cmd_prog = "5us"
read_xfer_overhead = "19.04us"
write_xfer_overhead = "19.04us"
transfer_oob = false
cache_program = {cache_program}
[ftl]
op = 0.5
cache = {{ capacity = "1MiB" }}
"#
    );
    DeviceConfig::from_toml(&text, "bounds").unwrap()
}

fn run(cfg: &DeviceConfig, w: PhysWorkload) -> PhysReport {
    w.validate(&cfg.geometry).unwrap();
    let p = Platform::build(cfg, &StoreChoice::Metadata, 1).unwrap();
    phys::run(&p, &w, &mut |_, _| {}).unwrap()
}

fn assert_close(measured: f64, analytic: f64, tolerance: f64, what: &str) {
    let err = (measured / analytic - 1.0).abs();
    assert!(
        err <= tolerance,
        "{what}: measured {measured:.1}, analytic {analytic:.1} ({:.2}% off)",
        err * 100.0
    );
}

#[test]
fn reads_on_a_busy_channel_are_channel_bound() {
    // 8 dies share one channel. Each read holds the channel for its 3 us setup and its 60 us
    // data out; tR (40 us) overlaps other dies' transfers. Bound: 1 read per 63 us.
    let cfg = device(1, 8, false);
    let r = run(&cfg, PhysWorkload { op: PhysOp::Read, qd: 32, count: 4_000, ..Default::default() });
    assert_close(r.read.as_ref().unwrap().per_sec, 1e6 / 63.0, 0.01, "channel-bound reads");
    assert!(r.channel_utilisation[0] > 0.99, "{:?}", r.channel_utilisation);
}

#[test]
fn reads_with_one_die_per_channel_are_die_bound() {
    // One die per channel: each read occupies its die for 3 + 40 + 60 us. Bound: 4 / 103 us.
    let cfg = device(4, 1, false);
    let r = run(&cfg, PhysWorkload { op: PhysOp::Read, qd: 16, count: 4_000, ..Default::default() });
    assert_close(r.read.as_ref().unwrap().per_sec, 4e6 / 103.0, 0.01, "die-bound reads");
}

#[test]
fn programs_are_die_bound_and_cache_program_hides_the_load() {
    // Without cache program a die spends 5 + 60 + 400 us per page; with it, loading the next
    // page overlaps tPROG and the die programs one page per 400 us.
    let w = PhysWorkload { op: PhysOp::Program, qd: 16, count: 2_000, ..Default::default() };
    let plain = run(&device(4, 1, false), w.clone());
    assert_close(plain.program.as_ref().unwrap().per_sec, 4e6 / 465.0, 0.01, "programs");
    let cached = run(&device(4, 1, true), w);
    assert_close(cached.program.as_ref().unwrap().per_sec, 4e6 / 400.0, 0.01, "cache programs");
}

#[test]
fn hostftl_array_reaches_its_analytic_write_bound() {
    // PRESETS.md: write bound = 4 groups x 8 channels x (15.6 KiB x 2 dies) / 600 us.
    let cfg = firmware::presets::get("hostftl-array").unwrap().unwrap();
    let r = run(&cfg, PhysWorkload { op: PhysOp::Program, qd: 256, count: 64 * 200, ..Default::default() });
    let pages_per_sec = r.program.as_ref().unwrap().per_sec;
    let bound_pages = 4.0 * 8.0 * 2.0 / 600e-6;
    assert_close(pages_per_sec, bound_pages, 0.02, "hostftl-array program pages/s");
    let mib_per_sec = pages_per_sec * 15.6 * 1024.0 / (1024.0 * 1024.0);
    assert_close(mib_per_sec, 1625.0, 0.02, "hostftl-array MiB/s at 15.6 KiB per page");
}
