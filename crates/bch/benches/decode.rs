//! Encode and decode throughput (codewords per wall-clock second).
//!
//! * 512 B, t = 12 (m = 13): SoftSSD's default sector code.
//! * 1 KiB and 2 KiB, t = 40 (m = 14, 15): codes of a modern TLC controller's strength.
//!
//! Decode runs on words with 0, 1 and t bit errors, spread over data and parity; the errors
//! are re-applied to a fresh copy for every iteration (the copy is part of what is timed, and
//! is small next to a decode with errors).
//!
//! Run: `cargo bench -p ssdlab-bch --bench decode`. Criterion reports elements (codewords) / s.

use std::hint::black_box;

use bch::{Bch, DecodeCost};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

/// The codes: (name, m, t, data bytes).
const CODES: [(&str, u32, u32, u32); 3] =
    [("512B_t12", 13, 12, 512), ("1KiB_t40", 14, 40, 1024), ("2KiB_t40", 15, 40, 2048)];

/// `count` distinct positions spread over the codeword's `n` bits.
fn positions(n: u32, count: u32) -> Vec<u32> {
    (0..count)
        .map(|i| (u64::from(i) * 7919 * u64::from(n) / u64::from(count.max(1)) / 7919) as u32 + i % 3)
        .collect()
}

fn flip(code: &Bch, data: &mut [u8], parity: &mut [u8], pos: u32) {
    let d = code.data_bits();
    if pos < d {
        data[pos as usize / 8] ^= 0x80 >> (pos % 8);
    } else {
        let p = pos - d;
        parity[p as usize / 8] ^= 0x80 >> (p % 8);
    }
}

fn bench(c: &mut Criterion) {
    for (name, m, t, bytes) in CODES {
        let code = Bch::new(m, t, bytes * 8).expect("valid code");
        let data: Vec<u8> = (0..bytes).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let parity = code.encode(&data);
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Elements(1));
        g.bench_function("encode", |b| b.iter(|| code.encode(black_box(&data))));
        for errors in [0, 1, t] {
            let mut bad_data = data.clone();
            let mut bad_parity = parity.clone();
            for p in positions(code.codeword_bits(), errors) {
                flip(&code, &mut bad_data, &mut bad_parity, p);
            }
            g.bench_function(format!("decode_{errors}_errors"), |b| {
                b.iter_batched_ref(
                    || (bad_data.clone(), bad_parity.clone()),
                    |(d, p)| {
                        let mut cost = DecodeCost::default();
                        let r = code.decode(d, p, &mut cost);
                        assert!(r.is_ok());
                        cost
                    },
                    BatchSize::SmallInput,
                )
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
