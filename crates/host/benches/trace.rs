//! Trace parsing throughput: records per wall-clock second, per format.
//!
//! Two kinds of input, all held in memory so the measurement is decompression and parsing:
//!
//! - the shared traces (`../shared/traces`), as stored (gzip or plain) and decompressed, when
//!   the directory exists;
//! - synthetic traces of [`SYNTHETIC_RECORDS`] lines in each format, generated from a fixed seed
//!   (the 1 million records per second target is for SPC and MSR).
//!
//! Run: `cargo bench -p ssdlab-host --bench trace`. Criterion reports elements (records)/s.

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Read;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use host::trace::{ReadOptions, TraceFormat, TraceReader};

/// Lines in each synthetic trace.
const SYNTHETIC_RECORDS: u64 = 1_000_000;

/// Every record of `bytes`, counted (panics on any error).
fn parse(bytes: &'static [u8], format: Option<TraceFormat>) -> u64 {
    let options = ReadOptions { format, ..ReadOptions::default() };
    let reader = TraceReader::from_reader("bench", bytes, options).unwrap();
    let mut n = 0;
    for record in reader {
        black_box(record.unwrap());
        n += 1;
    }
    n
}

/// A fixed-seed xorshift, for synthetic fields.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A synthetic trace of [`SYNTHETIC_RECORDS`] records in `format`, shaped like the real ones
/// (4-64 KiB requests over a few hundred GB, a few volumes, increasing times).
fn synthetic(format: TraceFormat) -> String {
    let mut rng = Xorshift(0x5eed_7ace);
    let mut out = String::with_capacity(SYNTHETIC_RECORDS as usize * 64);
    if format == TraceFormat::Iolog {
        out.push_str("fio version 3 iolog\n");
    }
    if format == TraceFormat::Recording {
        out.push_str(host::trace::RECORDING_HEADER);
        out.push('\n');
    }
    let mut time_ns: u64 = 0;
    for seq in 0..SYNTHETIC_RECORDS {
        time_ns += rng.next() % 100_000;
        let volume = rng.next() % 4;
        let sector = rng.next() % (600 << 30 >> 9);
        let sectors = 8 * (1 + rng.next() % 16);
        let read = !rng.next().is_multiple_of(3);
        let (s, ns) = (time_ns / 1_000_000_000, time_ns % 1_000_000_000);
        let _ = match format {
            TraceFormat::Spc => {
                writeln!(
                    out,
                    "{volume},{sector},{},{},{s}.{:06}",
                    sectors * 512,
                    if read { 'r' } else { 'w' },
                    ns / 1000
                )
            }
            TraceFormat::Msr => writeln!(
                out,
                "{},hm,{volume},{},{},{},{}",
                128_166_385_295_514_663 + time_ns / 100,
                if read { "Read" } else { "Write" },
                sector * 512,
                sectors * 512,
                rng.next() % 100_000
            ),
            TraceFormat::Mqsim => writeln!(out, "{time_ns} {volume} {sector} {sectors} {}", u8::from(read)),
            TraceFormat::Blkparse => writeln!(
                out,
                "  8,{:<3} {:>2} {seq:>8} {s:>5}.{ns:09} {:>5}  Q {:>3} {sector} + {sectors} [fio]",
                volume * 16,
                seq % 4,
                1000 + volume,
                if read { "R" } else { "WS" }
            ),
            TraceFormat::Iolog => writeln!(
                out,
                "{} /dev/nvme{volume}n1 {} {} {}",
                time_ns / 1000,
                if read { "read" } else { "write" },
                sector * 512,
                sectors * 512
            ),
            TraceFormat::Recording => writeln!(
                out,
                "{time_ns} {volume} {} {} {} {} - ok 50000 40000",
                volume + 1,
                if read { "read" } else { "write" },
                sector * 512,
                sectors * 512
            ),
        };
    }
    out
}

/// Leaks `bytes` for the whole run, so every iteration reads the same buffer without a copy.
fn leak(bytes: Vec<u8>) -> &'static [u8] {
    Box::leak(bytes.into_boxed_slice())
}

/// Benchmarks parsing `bytes` as `name`, with the record count as throughput.
fn bench_input(
    c: &mut Criterion,
    group: &str,
    name: &str,
    bytes: &'static [u8],
    format: Option<TraceFormat>,
) {
    let records = parse(bytes, format);
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.throughput(Throughput::Elements(records));
    g.bench_function(name, |b| b.iter(|| parse(bytes, format)));
    g.finish();
}

fn shared(c: &mut Criterion) {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces"));
    if !dir.is_dir() {
        println!("shared traces not found at {}; skipping", dir.display());
        return;
    }
    for file in [
        "websearch-sample.spc.gz",
        "websearch-sample.mqsim.trace.gz",
        "tpcc-sample.mqsim.trace.gz",
        "msr-hm_0-sample.csv",
    ] {
        let stored = std::fs::read(dir.join(file)).unwrap();
        let mut plain = Vec::new();
        if stored.starts_with(&[0x1f, 0x8b]) {
            flate2::read::MultiGzDecoder::new(&stored[..]).read_to_end(&mut plain).unwrap();
            bench_input(c, "shared_stored", file, leak(stored), None);
        }
        let plain = if plain.is_empty() { std::fs::read(dir.join(file)).unwrap() } else { plain };
        bench_input(c, "shared_plain", file, leak(plain), None);
    }
}

fn synthetic_traces(c: &mut Criterion) {
    for format in TraceFormat::ALL {
        let text = leak(synthetic(format).into_bytes());
        bench_input(c, "synthetic_1m", format.name(), text, Some(format));
    }
}

criterion_group!(benches, shared, synthetic_traces);
criterion_main!(benches);
