//! The reliability stack in the firmware (issue 28): bit errors from the NAND error model,
//! decoded by the BCH code on the ECC core, read retry, and media errors to the host.

use firmware::device::Device;
use firmware::ecc::EccStats;
use firmware::platform::StoreChoice;

use crate::experiments::{build, device, run};

/// The small test device with `[ecc.errors]` set to `errors` (TOML table body).
fn with_errors(errors: &str) -> firmware::config::DeviceConfig {
    device(&format!("{}\n[ecc.errors]\n{errors}\n", crate::SMALL))
}

/// A constant RBER of `rber` on every read, all of it "retention" (the part a retry step
/// undoes): `b·N^0·t^0`.
fn constant(rber: f64) -> String {
    format!("rber = {{ e = 0.0, a = 0.0, k = 1.0, b = {rber}, m = 0.0, n = 0.0, c = 0.0, p = 1.0, q = 1.0 }}")
}

/// Writes the device once and reads it back at random; returns the ECC's counts and the read
/// errors the host saw.
fn write_then_read(cfg: &firmware::config::DeviceConfig, seed: u64) -> (EccStats, u64) {
    write_then_read_on(&build(cfg, seed), seed)
}

/// [`write_then_read`] on `dev`.
fn write_then_read_on(dev: &Device, seed: u64) -> (EccStats, u64) {
    run(dev, "rw=write bs=128k iodepth=8 size=100%", seed);
    let r = run(dev, "rw=randread bs=4k iodepth=16 number_ios=4000", seed);
    (dev.ftl.stats().ecc, r.ops[0].errors)
}

#[test]
fn bit_errors_are_corrected_and_reads_beyond_the_code_are_retried() {
    // 1e-3 of 4,096 bits: about 4 errors per 512 B codeword, a few percent of 16 KiB pages
    // with one beyond t = 12; the first retry step takes 30% of them away.
    let (ecc, errors) = write_then_read(&with_errors(&constant(1e-3)), 7);
    // Reads the data cache answers never reach the flash.
    let n = ecc.reads();
    assert!(n > 2000, "{ecc:?}");
    assert_eq!(errors, 0, "every read decoded: {ecc:?}");
    assert_eq!(ecc.uncorrectable_reads, 0, "{ecc:?}");
    assert!(ecc.corrected_reads as f64 > 0.8 * n as f64, "most pages have errors: {ecc:?}");
    assert!(ecc.retried_reads > 0, "some needed a retry: {ecc:?}");
    assert_eq!(ecc.by_attempt.iter().sum::<u64>(), n);
    assert_eq!(
        ecc.pages_checked,
        n + ecc.by_attempt.iter().enumerate().map(|(i, n)| i as u64 * n).sum::<u64>()
    );
    // A 4 KiB read decodes the 8 codewords of its unit, not the page's 32: at about 4 errors
    // a codeword, nearly all 8 have some.
    assert!(ecc.codewords_corrected <= 8 * ecc.pages_checked, "{ecc:?}");
    assert!(ecc.codewords_corrected > 7 * n, "{ecc:?}");
    // About 4.1 bits per erroneous codeword (those that did not decode are not counted).
    let per = ecc.bits_corrected as f64 / ecc.codewords_corrected as f64;
    assert!((3.5..5.0).contains(&per), "{per} bits per corrected codeword: {ecc:?}");
    // The decoder's cost grows with the errors: well above the flat 20,000 cycles per
    // codeword for a single error.
    assert!(ecc.decode_cycles / ecc.codewords_corrected > 30_000, "{ecc:?}");
}

#[test]
fn reads_no_attempt_can_decode_reach_the_host_as_media_errors() {
    // 2e-2 of 4,096 bits: 82 errors per codeword; a floor no retry undoes.
    let cfg = with_errors(
        "rber = { e = 2e-2, a = 0.0, k = 1.0, b = 0.0, m = 1.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0 }",
    );
    let (ecc, errors) = write_then_read(&cfg, 3);
    assert!(ecc.reads() > 2000, "{ecc:?}");
    assert_eq!(ecc.uncorrectable_reads, ecc.reads(), "{ecc:?}");
    assert_eq!(errors, ecc.uncorrectable_reads, "every flash read failed to the host: {ecc:?}");
    assert_eq!(ecc.pages_checked, ecc.reads() * 9, "the first read and eight retry steps each: {ecc:?}");
}

#[test]
fn a_fresh_device_under_the_default_model_reads_clean_and_errors_are_deterministic() {
    let cfg = with_errors("");
    let (fresh, _) = write_then_read(&cfg, 5);
    assert!(fresh.clean_reads as f64 > 0.9 * fresh.reads() as f64, "{fresh:?}");
    assert_eq!(fresh.uncorrectable_reads, 0);
    let noisy = with_errors(&constant(5e-4));
    let (a, b) = (write_then_read(&noisy, 11).0, write_then_read(&noisy, 11).0);
    assert_eq!(a, b, "the same seed gives the same errors");
    assert_ne!(a, write_then_read(&noisy, 12).0, "another seed, other errors");
}

#[test]
fn bad_error_models_are_refused_in_one_line() {
    let refused = |errors: &str, wanted: &str| {
        let text = format!("{}\n[ecc.errors]\n{errors}\n", crate::SMALL);
        let e = firmware::config::DeviceConfig::from_toml(&text, "test").expect_err(errors).to_string();
        assert!(e.contains(wanted) && !e.contains('\n'), "{errors}: {e}");
    };
    refused("retry = { steps = [] }", "retry.steps");
    refused(
        "rber = { e = -1e-6, a = 0.0, k = 1.0, b = 0.0, m = 1.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0 }",
        "rber.e",
    );
    refused("max_rber = nan", "max_rber");
    // 60 bits per 512 B need 98 parity bytes a codeword: 3,136 a page, beyond a 2 KiB OOB.
    let small = crate::SMALL.replace("page_size = \"16KiB\"", "page_size = \"16KiB\"\noob_size = \"2KiB\"");
    let big_t = format!("{small}\n[ecc]\ncorrectable = 60\nerrors = {{}}\n");
    let e = firmware::config::DeviceConfig::from_toml(&big_t, "test").expect_err("t = 60").to_string();
    assert!(e.contains("OOB") && e.contains("ecc.correctable"), "{e}");
    let both = format!("{}\n[ecc]\nrber = 1e-6\nerrors = {{}}\n", crate::SMALL);
    let e = firmware::config::DeviceConfig::from_toml(&both, "test").expect_err("both").to_string();
    assert!(e.contains("ecc.errors"), "{e}");
}

/// No bit errors at all: the floor, wear, retention and disturb terms are 0.
const NO_BIT_ERRORS: &str =
    "rber = { e = 0.0, a = 0.0, k = 1.0, b = 0.0, m = 1.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0 }";

#[test]
fn when_the_spares_run_out_the_device_goes_read_only_and_says_so() {
    // One erase in 20 fails: blocks retire fast, and a plane's spares run out within a few
    // passes over the device.
    let wear = "wear_out = { rated_pe = 1, program_fail_at_rated = 0.0, erase_fail_at_rated = 0.05, exponent = 0.0 }";
    let dev = build(&with_errors(&format!("{NO_BIT_ERRORS}\n{wear}")), 9);
    run(&dev, "rw=write bs=128k iodepth=8 size=100%", 9);
    let fresh = dev.controller.smart_log();
    assert_eq!((fresh.available_spare, fresh.critical_warning), (100, 0), "{fresh:?}");
    let mut passes = 0;
    while !dev.ftl.read_only() {
        passes += 1;
        assert!(passes <= 40, "still writable after 40 passes: {:?}", dev.ftl.stats().media);
        run(&dev, "rw=randwrite bs=4k iodepth=16 number_ios=20000", 100 + passes);
    }
    let media = dev.ftl.stats().media;
    assert!(media.read_only_at.is_some() && media.erase_failures == media.grown_bad_blocks, "{media:?}");
    let smart = dev.controller.smart_log();
    assert_eq!(smart.available_spare, 0, "{smart:?}");
    assert_eq!(smart.critical_warning, 0x01 | 0x04 | 0x08, "spare low, degraded, read-only: {smart:?}");
    // Writes fail; reads go on.
    let w = run(&dev, "rw=randwrite bs=4k iodepth=4 number_ios=200", 1);
    assert_eq!(w.ops[1].errors, 200, "every write refused");
    let r = run(&dev, "rw=randread bs=4k iodepth=4 number_ios=2000", 2);
    assert_eq!(r.ops[0].errors, 0, "reads go on");
    assert_eq!(dev.controller.smart_log().media_errors, 0, "a refused write is not a media error");
}

#[test]
fn data_refresh_rewrites_blocks_whose_retention_errors_near_the_limit() {
    // Retention alone: 2e-4 per day since the block's first program (b·t^1), nothing else.
    // At a 4,096-bit codeword and t = 12, refresh at half of t wants 6 expected errors: 7.3
    // days. A scan every day rewrites each block in its eighth day, so reads almost never
    // need more than the first attempt (a codeword's count is spread around its mean: at 6 or
    // 7 expected, about 1% of codewords have more than 12); without refresh, after 20 days
    // (16 errors a codeword) nearly every read must retry.
    let rber = "rber = { e = 0.0, a = 0.0, k = 1.0, b = 2e-4, m = 0.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0 }";
    let days = |d: u64| sim::SimDuration::from_secs(d * 86_400);
    let read_after_20_days = |refresh: &str| {
        let cfg = with_errors(rber).set("ftl.refresh.interval", refresh).unwrap_or_else(|e| panic!("{e}"));
        let dev = build(&cfg, 4);
        run(&dev, "rw=write bs=128k iodepth=8 size=100%", 4);
        dev.idle(days(20)).unwrap();
        // The host's reads alone (refresh's moves read pages too, counted with GC's).
        let before = dev.ftl.stats().ecc;
        let r = run(&dev, "rw=randread bs=4k iodepth=16 number_ios=3000", 5);
        assert_eq!(r.ops[0].errors, 0);
        let st = dev.ftl.stats();
        assert_eq!(st.ecc.internal_reads, before.internal_reads, "no GC during the reads");
        let host = EccStats {
            clean_reads: st.ecc.clean_reads - before.clean_reads,
            corrected_reads: st.ecc.corrected_reads - before.corrected_reads,
            retried_reads: st.ecc.retried_reads - before.retried_reads,
            uncorrectable_reads: st.ecc.uncorrectable_reads - before.uncorrectable_reads,
            ..EccStats::default()
        };
        (host, st.media)
    };
    let (ecc, media) = read_after_20_days("1d");
    assert!(media.refresh_scans >= 20 && media.blocks_refreshed > 100, "{media:?}");
    assert!(media.units_refreshed > 0, "{media:?}");
    assert!(ecc.retried_reads * 30 < ecc.reads(), "refreshed data reads at the first attempt: {ecc:?}");
    assert_eq!(ecc.uncorrectable_reads, 0, "{ecc:?}");
    let (stale, none) = read_after_20_days("0");
    assert_eq!((none.refresh_scans, none.blocks_refreshed), (0, 0), "{none:?}");
    assert!(stale.retried_reads as f64 > 0.9 * stale.reads() as f64, "{stale:?}");
}

/// The small device as TLC, aged to steady state by `overwrites` overwrites of its capacity,
/// with the error model on or off; the report of a mixed random run on it.
fn aged_tlc_report(errors: bool, overwrites: f64, seed: u64) -> report::Report {
    let mut cfg = device(crate::SMALL).set("timing.cell", "tlc").unwrap();
    if errors {
        cfg = cfg.set("ecc.errors", "{}").unwrap();
    }
    let start = ssdlab::Start::Precondition(firmware::ftl::Precondition::SteadyState { overwrites });
    let store = firmware::platform::StoreChoice::Metadata;
    let p = ssdlab::prepare(&cfg, &store, seed, start, &mut |_, _| {}).unwrap();
    let jobs = [crate::experiments::job("rw=randrw rwmixread=50 bs=4k iodepth=16 number_ios=12000")];
    ssdlab::measure(&p, &jobs, seed, &host::run::RunOptions::default(), &mut |_| {}).unwrap()
}

/// The deterministic part of a report's JSON.
fn deterministic(r: &report::Report) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_time_s");
    o.remove("requests_per_wall_sec");
    v
}

#[test]
fn the_time_series_shows_errors_retries_and_wear_on_an_aged_tlc_device() {
    let r = aged_tlc_report(true, 100.0, 3);
    let ts = &r.timeseries;
    let n = ts.t_ms.len();
    assert!(n > 10, "{n} points");
    for col in [&ts.ecc_reads, &ts.ecc_corrected, &ts.ecc_retried, &ts.ecc_uncorrectable] {
        assert_eq!(col.len(), n);
    }
    assert_eq!((ts.rber.len(), ts.ecc_busy.len(), ts.pe_mean.len()), (n, n, n));
    // The columns add up to the run's counts (the series starts with the run).
    let e = &r.ecc;
    assert_eq!(ts.ecc_reads.iter().sum::<u64>(), e.reads(), "{e:?}");
    assert_eq!(ts.ecc_corrected.iter().sum::<u64>(), e.corrected_reads);
    assert_eq!(ts.ecc_retried.iter().sum::<u64>(), e.retried_reads);
    assert_eq!(ts.ecc_uncorrectable.iter().sum::<u64>(), e.uncorrectable_reads);
    assert!(ts.ecc_corrected.iter().filter(|&&c| c > 0).count() > n / 4, "{:?}", ts.ecc_corrected);
    // Aged to about 570 cycles: about one bit error in 30 codewords (RBER near 1e-5).
    let rber: Vec<f64> = ts.rber.iter().flatten().copied().collect();
    assert!(rber.len() > n / 2 && rber.iter().all(|&x| (0.0..1e-3).contains(&x)), "{rber:?}");
    assert!(rber.iter().any(|&x| x > 0.0));
    assert!((1e-7..1e-4).contains(&e.rber), "run's observed RBER {}", e.rber);
    // The same rate from the histogram of codewords by their errors.
    let t = r.device.ecc.correctable as usize;
    assert_eq!(e.errors_per_codeword.len(), t + 1);
    let bits: u64 = e.errors_per_codeword.iter().enumerate().map(|(k, n)| k as u64 * n).sum();
    assert_eq!(bits, e.bits_observed);
    assert_eq!(e.errors_per_codeword.iter().sum::<u64>() + e.codewords_failed, e.codewords_checked);
    assert_eq!(e.bits_checked, e.codewords_checked * r.device.ecc.codeword.bytes() * 8);
    assert!(e.bits_observed >= e.bits_corrected, "{e:?}");
    assert!(e.internal_reads > 0, "GC's reads are checked too: {e:?}");
    assert_eq!(e.data_bits_read, (e.reads() - e.internal_reads) * 4096 * 8, "4 KiB host reads");
    assert_eq!(e.uber, e.units_uncorrectable as f64 / e.data_bits_read as f64);
    // The ECC core's decoding time: in the interval shares and in the core's utilisation.
    assert!(
        e.busy_ns > 0 && ts.ecc_busy.iter().all(|&b| (0.0..=1.0 + 1e-9).contains(&b)),
        "{:?}",
        ts.ecc_busy
    );
    let core = r.utilisation.cores.iter().find(|c| c.name == "ecc").expect("an ecc core");
    let share = e.busy_ns as f64 / r.sim_time_ns as f64;
    assert!(share <= core.busy + 1e-9 && share > 0.5 * core.busy, "{share} vs {}", core.busy);
    // Writes and GC wear the device during the run.
    let (first, last) = (ts.pe_mean[0], ts.pe_mean[n - 1]);
    assert!(first > 100.0 && last > first, "mean P/E {first} -> {last}");
    assert!(ts.pe_mean.windows(2).all(|w| w[0] <= w[1]), "{:?}", ts.pe_mean);
    assert!((last - r.wear.mean).abs() < 1e-9, "{last} vs {}", r.wear.mean);
}

#[test]
fn the_ecc_series_is_deterministic() {
    let (a, b) = (aged_tlc_report(true, 100.0, 4), aged_tlc_report(true, 100.0, 4));
    assert_eq!(deterministic(&a), deterministic(&b));
    assert!(a.ecc.codewords_checked > 0);
    assert_ne!(
        deterministic(&a)["timeseries"]["rber"],
        deterministic(&aged_tlc_report(true, 100.0, 5))["timeseries"]["rber"]
    );
}

#[test]
fn without_bit_errors_the_new_fields_are_zeros_and_nothing_else_moves() {
    let r = aged_tlc_report(false, 2.0, 6);
    let ts = &r.timeseries;
    let n = ts.t_ms.len();
    assert!(n > 0);
    for col in [&ts.ecc_reads, &ts.ecc_corrected, &ts.ecc_retried, &ts.ecc_uncorrectable] {
        assert_eq!(col, &vec![0; n]);
    }
    assert_eq!(ts.rber, vec![None; n]);
    assert_eq!(ts.ecc_busy, vec![0.0; n]);
    assert!(ts.pe_mean.iter().all(|&p| p > 0.0), "P/E is the array's, errors or not");
    assert_eq!(r.ecc.counts, EccStats::default());
    assert_eq!((r.ecc.rber, r.ecc.uber), (0.0, 0.0));
    let v = deterministic(&r);
    assert_eq!(v["ecc"]["errors_per_codeword"], serde_json::json!([]));
    // The last point's mean P/E is the report's wear.
    assert!((ts.pe_mean[n - 1] - r.wear.mean).abs() < 1e-9);
}

/// Issue 28: in payload mode the codec runs on the real bytes (errors flipped in the page read,
/// corrected by the BCH decoder, its own operations charged), in metadata mode the same
/// decision and cost come from the error count. With the same seed and workload both give the
/// same counts: corrected, retried and uncorrectable reads, bits, codewords and decoder cycles.
/// (They could differ only by a miscorrection, a word beyond t that the decoder takes for
/// another codeword, which metadata mode does not draw: for the 512 B t = 12 code about 8e-13
/// of the failing words, docs/bch.md.)
#[test]
fn payload_mode_decodes_real_bytes_and_agrees_with_metadata_mode() {
    // About 4 errors a codeword (some pages need a retry), then about 10.6 errors a codeword of
    // floor, which no retry undoes: many reads fail every attempt.
    let floor =
        "rber = { e = 2.6e-3, a = 0.0, k = 1.0, b = 0.0, m = 1.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0 }";
    for (errors, seed) in [(constant(1e-3), 7), (floor.to_string(), 3)] {
        let cfg = with_errors(&errors);
        let (meta, meta_errors) = write_then_read(&cfg, seed);
        let dev = Device::build(&cfg, &StoreChoice::Memory, seed).unwrap();
        assert!(dev.ftl.payload());
        let (bytes, bytes_errors) = write_then_read_on(&dev, seed);
        eprintln!("{errors}:\n  payload  {bytes:?}\n  metadata {meta:?}");
        assert!(bytes.corrected_reads > 0 && bytes.bits_corrected > 0, "{bytes:?}");
        // A failing word costs what the decoder did: usually a degree-t locator and a full
        // Chien search, which is what metadata mode charges, but a word whose locator ends
        // above degree t stops before the Chien search (docs/bch.md). With no read beyond the
        // code (the first case, retries included) the cycles are identical; with many, within 0.1%.
        let close = |a: u64, b: u64| a.abs_diff(b) as f64 <= 1e-3 * b as f64;
        // So is the ECC core's busy time, which every decode adds to (failed attempts too).
        assert!(close(bytes.decode_cycles, meta.decode_cycles), "{bytes:?}\n{meta:?}");
        assert!(close(bytes.busy_ns, meta.busy_ns), "{bytes:?}\n{meta:?}");
        if meta.uncorrectable_reads == 0 {
            assert_eq!((bytes.decode_cycles, bytes.busy_ns), (meta.decode_cycles, meta.busy_ns));
        }
        let same_cycles =
            EccStats { decode_cycles: meta.decode_cycles, busy_ns: meta.busy_ns, ..bytes.clone() };
        assert_eq!(same_cycles, meta, "payload (left) and metadata (right) modes, {errors}");
        assert_eq!(bytes_errors, meta_errors);
        assert_eq!(bytes_errors, bytes.uncorrectable_reads);
    }
}

/// The same seed gives the same errors in payload mode too (the positions come from a stream
/// of their own, forked from the run's seed).
#[test]
fn payload_mode_is_deterministic() {
    let cfg = with_errors(&constant(1e-3));
    let stats = |seed| write_then_read_on(&Device::build(&cfg, &StoreChoice::Memory, seed).unwrap(), seed).0;
    let a = stats(11);
    assert_eq!(a, stats(11));
    assert_ne!(a, stats(12));
}
