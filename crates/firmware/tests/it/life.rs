//! The life test (issue 28): a TLC device under the default error model, driven with random
//! writes and reads past its rated P/E cycles, with a retention pause after every round, until
//! its spares run out and it goes read-only; every read is checked against the shadow store.
//!
//! Ignored by default (minutes): `cargo test --release -p ssdlab-firmware --test it life --
//! --ignored --nocapture` prints a row per round. `SSDLAB_LIFE_ROUNDS` (default 80) and
//! `SSDLAB_LIFE_SEED` (default 1) change the run.

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::platform::StoreChoice;
use firmware::system::System;
use nand::errors::{ErrorModel, PageAge, ReadAttempt, codeword_failure_probability};
use nand::{CellType, PageType};
use sim::SimDuration;
use testkit::{Conformance, Plan};

/// A small TLC device: 2 planes of 32 blocks of 16 pages (16 MiB raw), 35% over-provisioning
/// (11 spare blocks a plane, 5 above the end-of-life level), the error model at its TLC
/// defaults (BCH t = 12 per 512 B, refresh every day at half of t).
fn device() -> DeviceConfig {
    let text = r#"
name = "life"
[geometry]
channels = 1
ways = 1
dies = 1
planes = 2
blocks = 32
pages = 16
page_size = "16KiB"
oob_size = "1KiB"
[timing]
cell = "tlc"
[controller]
dram = "64MiB"
[host]
queues = 4
[ftl]
op = 0.35
cache = { capacity = "256KiB" }
[ecc.errors]
"#;
    DeviceConfig::from_toml(text, "life device").unwrap_or_else(|e| panic!("{e}"))
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
#[ignore = "minutes: the life test, run by hand (see the module docs)"]
fn a_tlc_device_from_fresh_to_read_only_never_returns_wrong_data() {
    let (rounds, seed) = (env("SSDLAB_LIFE_ROUNDS", 80) as u32, env("SSDLAB_LIFE_SEED", 1));
    let config = device();
    let dev = Device::build(&config, &StoreChoice::Memory, seed).unwrap_or_else(|e| panic!("{e}"));
    let plan = Plan {
        rounds,
        clients: 4,
        ops_per_client: 10_000,
        max_blocks: 64,
        mix: [30, 64, 2, 1, 3],
        media_errors: true,
        idle_between_rounds: SimDuration::from_secs(7 * 86_400),
        ..Plan::default()
    };
    let model = ErrorModel::defaults(CellType::Tlc);
    let bits = 512 * 8;
    eprintln!(
        "round | mean P/E | model RBER (MSB, 1 week) | P(codeword > t) | page reads | corrected | retried | uncorrectable | grown bad | spares | refreshed | read-only"
    );
    let mut last = firmware::ftl::FtlStats::default();
    let mut first_read_only = None;
    let mut observe = |round: u32, d: &dyn System| {
        let totals = d.totals();
        let (st, counts) = (&totals.ftl, &totals.erase_counts);
        let pe = counts.iter().map(|&c| c as f64).sum::<f64>() / counts.len().max(1) as f64;
        let age = PageAge {
            pe_cycles: pe as u32,
            retention: SimDuration::from_secs(7 * 86_400),
            reads_since_erase: 0,
        };
        let rber = model.rber(PageType::Msb, &age, ReadAttempt::First);
        let (e, l) = (&st.ecc, &last.ecc);
        let reads = e.reads() - l.reads();
        let share = |x: u64| format!("{:.1}%", 100.0 * x as f64 / reads.max(1) as f64);
        if st.media.read_only_at.is_some() && first_read_only.is_none() {
            first_read_only = Some(round);
        }
        eprintln!(
            "{round:5} | {pe:8.0} | {rber:.2e} | {:.1e} | {reads} | {} | {} | {} | {} | {}% | {} | {}",
            codeword_failure_probability(rber, bits, 12),
            share(e.corrected_reads - l.corrected_reads),
            share(e.retried_reads - l.retried_reads),
            e.uncorrectable_reads - l.uncorrectable_reads,
            st.media.grown_bad_blocks,
            totals.smart.available_spare,
            st.media.blocks_refreshed,
            st.media
                .read_only_at
                .map_or("no".into(), |t| format!("since {:.1} days", t.as_secs_f64() / 86_400.0)),
        );
        last = st.clone();
    };
    let o = Conformance { config, seed, plan }
        .run_observed(&dev, &mut observe)
        .unwrap_or_else(|e| panic!("life test (SSDLAB_LIFE_SEED={seed}): {e}"));
    let totals = dev.totals();
    let st = &totals.ftl;
    let host_bits = o.blocks_checked * dev.front().lba_bytes() as u64 * 8;
    eprintln!(
        "life test: {} commands, {} blocks read back and checked ({host_bits} bits), {} media errors, {} writes refused; ECC {:?}; media {:?}",
        o.commands, o.blocks_checked, o.media_errors, o.refused, st.ecc, st.media
    );
    assert!(first_read_only.is_some(), "the spares never ran out in {rounds} rounds: {:?}", st.media);
    assert!(o.refused > 0, "writes after the end of life are refused");
    assert!(st.ecc.retried_reads > 0 && st.media.grown_bad_blocks > 0, "{:?} {:?}", st.ecc, st.media);
    assert_eq!(totals.smart.critical_warning & 0x08, 0x08, "SMART says read-only: {:?}", totals.smart);
}
