//! The shared real traces (`../shared/traces`, see its README): record counts, and the
//! WebSearch sample agreeing record by record in its MQSim and SPC forms.

use std::path::PathBuf;

use super::*;

/// The shared traces directory, or `None` (after saying so) in a checkout without it.
fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces"));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("shared traces not found at {}; skipping", dir.display());
        None
    }
}

/// Every record of the shared trace `file`, checking the detected format and compression.
fn read(dir: &Path, file: &str, format: TraceFormat, compression: Compression) -> Vec<TraceRecord> {
    let mut r = TraceReader::open(&dir.join(file), ReadOptions::default()).unwrap();
    assert_eq!((r.format(), r.compression()), (format, compression), "{file}");
    let records: Vec<_> = r.by_ref().collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.bad_lines(), 0);
    records
}

/// (records, reads) of `records`.
fn counts(records: &[TraceRecord]) -> (usize, usize) {
    (records.len(), records.iter().filter(|r| r.op == TraceOp::Read).count())
}

#[test]
fn websearch_in_both_forms() {
    let Some(dir) = shared_dir() else { return };
    let mqsim = read(&dir, "websearch-sample.mqsim.trace.gz", TraceFormat::Mqsim, Compression::Gzip);
    let spc = read(&dir, "websearch-sample.spc.gz", TraceFormat::Spc, Compression::Gzip);
    assert_eq!(counts(&mqsim), (24_783, 24_779));
    assert_eq!(counts(&spc), (24_783, 24_779));
    for (m, s) in mqsim.iter().zip(&spc) {
        assert_eq!(
            (m.op, m.offset, m.len),
            (s.op, s.offset, s.len),
            "MQSim line {} vs SPC line {}",
            m.line,
            s.line
        );
        // The conversion kept the volume and the time to the microsecond, too.
        assert_eq!(
            (m.volume, m.time_ns),
            (s.volume, s.time_ns),
            "MQSim line {} vs SPC line {}",
            m.line,
            s.line
        );
    }
}

#[test]
fn tpcc() {
    let Some(dir) = shared_dir() else { return };
    let records = read(&dir, "tpcc-sample.mqsim.trace.gz", TraceFormat::Mqsim, Compression::Gzip);
    assert_eq!(counts(&records), (6_999, 4_381));
}

#[test]
fn msr_hm_0() {
    let Some(dir) = shared_dir() else { return };
    let records = read(&dir, "msr-hm_0-sample.csv", TraceFormat::Msr, Compression::None);
    assert_eq!(counts(&records), (1_000, 508));
    assert!(records.iter().all(|r| r.volume == 0));
    let first = records[0];
    assert_eq!(first, rec(1, 12_816_638_529_551_466_300, 0, TraceOp::Write, 9_056_014_336, 2048));
}
