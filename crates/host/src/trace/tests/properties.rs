//! Seeded property tests: records rendered in each format parse back to exactly those records
//! (with or without detection, with garbage lines counted and skipped or stopping the reader),
//! and no input, however broken, makes the reader panic or yield a record whose end overflows.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

use super::render::{self, Raw, Rendered};
use super::*;

/// The fixed seed of every property here (`PROPTEST_RNG_SEED` overrides it); a failure prints
/// the minimal failing input.
const SEED: u64 = 0x7ace_5eed;

/// The seeded configuration, with `cases` cases.
fn config(cases: u32) -> Config {
    Config { cases, rng_seed: RngSeed::Fixed(SEED), failure_persistence: None, ..Config::default() }
}

/// Reads `text` in `format` (or detecting it), skipping bad lines or not.
fn read(format: Option<TraceFormat>, skip_bad_lines: bool, text: &str) -> TraceReader {
    let options = ReadOptions { format, skip_bad_lines, ..ReadOptions::default() };
    TraceReader::from_reader("p", Cursor::new(text.as_bytes().to_vec()), options).unwrap()
}

/// Checks that `rendered` parses back to its records, forced and detected, and that its garbage
/// lines are skipped and counted, or stop the reader at the first of them.
fn round_trip(format: TraceFormat, rendered: &Rendered) -> Result<(), TestCaseError> {
    let mut skip = read(Some(format), true, &rendered.text);
    let got: Vec<_> =
        skip.by_ref().collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&got, &rendered.want);
    prop_assert_eq!(skip.bad_lines(), rendered.garbage.len() as u64);

    let mut stop = read(Some(format), false, &rendered.text);
    let oks = stop.by_ref().take_while(Result::is_ok).count();
    match rendered.garbage.first() {
        None => prop_assert_eq!(oks, rendered.want.len()),
        Some(&line) => {
            prop_assert_eq!(oks, rendered.want.iter().filter(|r| r.line < line).count());
            let err = read(Some(format), false, &rendered.text).find_map(Result::err).unwrap().to_string();
            prop_assert!(err.starts_with(&format!("p:{line}: ")), "{}", err);
        }
    }

    if !rendered.want.is_empty() {
        let mut detected = read(None, true, &rendered.text);
        prop_assert_eq!(detected.format(), format);
        let got: Vec<_> = detected.by_ref().map(Result::unwrap).collect();
        prop_assert_eq!(&got, &rendered.want);
    }
    Ok(())
}

/// Records for one trace.
fn raws() -> impl Strategy<Value = Vec<Raw>> {
    vec(render::raw(), 0..48)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn spc_round_trips(raws in raws(), crlf in any::<bool>(), garbage in any::<bool>()) {
        round_trip(TraceFormat::Spc, &render::spc(&raws, crlf, garbage))?;
    }

    #[test]
    fn msr_round_trips(raws in raws(), crlf in any::<bool>(), garbage in any::<bool>()) {
        round_trip(TraceFormat::Msr, &render::msr(&raws, crlf, garbage))?;
    }

    #[test]
    fn mqsim_round_trips(raws in raws(), crlf in any::<bool>(), garbage in any::<bool>()) {
        round_trip(TraceFormat::Mqsim, &render::mqsim(&raws, crlf, garbage))?;
    }

    #[test]
    fn blkparse_round_trips(raws in raws(), crlf in any::<bool>(), garbage in any::<bool>()) {
        round_trip(TraceFormat::Blkparse, &render::blkparse(&raws, crlf, garbage))?;
    }

    #[test]
    fn iolog_v2_round_trips(raws in raws(), crlf in any::<bool>(), garbage in any::<bool>()) {
        round_trip(TraceFormat::Iolog, &render::iolog(&raws, crlf, garbage, 2))?;
    }

    #[test]
    fn iolog_v3_round_trips(raws in raws(), crlf in any::<bool>(), garbage in any::<bool>()) {
        round_trip(TraceFormat::Iolog, &render::iolog(&raws, crlf, garbage, 3))?;
    }
}

/// Reads `bytes` every way (each format forced, and detected; skipping bad lines or not) and
/// checks what comes out: no panic, increasing lines, records whose end fits, one-line errors.
fn read_every_way(bytes: &[u8]) -> Result<(), TestCaseError> {
    let formats = TraceFormat::ALL.map(Some);
    for format in formats.iter().chain([&None]) {
        for skip_bad_lines in [false, true] {
            let options = ReadOptions { format: *format, skip_bad_lines, ..ReadOptions::default() };
            let reader = match TraceReader::from_reader("p", Cursor::new(bytes.to_vec()), options) {
                Ok(reader) => reader,
                Err(e) => {
                    prop_assert!(format.is_none(), "only detection can fail up front: {}", e);
                    continue;
                }
            };
            let mut last = 0;
            for item in reader {
                match item {
                    Ok(r) => {
                        prop_assert!(r.line > last);
                        last = r.line;
                        prop_assert!(r.offset.checked_add(r.len).is_some());
                    }
                    Err(e) => prop_assert!(!e.to_string().contains('\n'), "{}", e),
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..2048)) {
        read_every_way(&bytes)?;
    }

    #[test]
    fn near_miss_text_never_panics(text in "([0-9]{1,22}|[,. +#\\[\\]\t-]|\r?\n|fio version [0-9] iolog\n|[RWDFNQACm]{1,3}|read|wait|sync|Read|Write){0,80}") {
        read_every_way(text.as_bytes())?;
    }
}
