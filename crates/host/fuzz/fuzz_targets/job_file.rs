//! Fuzzes the fio job-file parser with arbitrary text, then validates every job it accepts
//! against a small device and draws I/Os from each stream, checking that they stay inside the
//! device and aligned. Any panic is a bug: bad input must come back as a one-line error.

#![no_main]

use host::workload::{JobStream, parse_job_file};
use libfuzzer_sys::fuzz_target;

const CAPACITY: u64 = 64 << 20;
const LBA: u32 = 512;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(jobs) = parse_job_file(&text, "fuzz.fio") else { return };
    for (i, spec) in jobs.iter().enumerate() {
        let _ = format!("{spec:?}");
        if spec.validate(CAPACITY, LBA).is_err() {
            continue;
        }
        for clone in [0, spec.numjobs - 1] {
            let mut stream = JobStream::new(spec, clone, CAPACITY, LBA, i as u64).expect("validated job");
            let region = stream.region();
            for _ in 0..64 {
                let Some(io) = stream.next() else { break };
                assert!(io.offset >= region.start && io.offset + io.len as u64 <= region.end);
                assert!(region.end <= CAPACITY);
                assert!(io.offset % LBA as u64 == 0 && io.len % LBA == 0 && io.len > 0);
            }
        }
    }
});
