//! Renders records in each format, with noise the parsers must skip (blank lines, comments,
//! other blkparse events, fio file actions) and optional garbage lines they must reject, for the
//! property tests. Each renderer returns the text and the exact records it must parse to.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

/// The raw material of one record; each renderer fits it to what its format can express.
#[derive(Debug, Clone)]
pub(super) struct Raw {
    time: u64,
    volume: u32,
    op: u8,
    offset: u64,
    len: u64,
    /// Bits choosing spellings and the noise lines before the record.
    noise: u16,
}

/// A number, often small, sometimes huge.
fn number() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 0..10_000u64, any::<u64>(), (u64::MAX - 10_000)..=u64::MAX]
}

/// A random [`Raw`].
pub(super) fn raw() -> impl Strategy<Value = Raw> {
    (number(), prop_oneof![0..4u32, any::<u32>()], any::<u8>(), number(), number(), any::<u16>())
        .prop_map(|(time, volume, op, offset, len, noise)| Raw { time, volume, op, offset, len, noise })
}

/// A rendered trace.
#[derive(Debug, Default)]
pub(super) struct Rendered {
    /// The trace text.
    pub text: String,
    /// What it must parse to.
    pub want: Vec<TraceRecord>,
    /// The garbage lines in it.
    pub garbage: Vec<u64>,
    /// Whether lines end in `\r\n`.
    crlf: bool,
    /// Lines so far.
    lines: u64,
}

impl Rendered {
    fn new(crlf: bool) -> Self {
        Rendered { crlf, ..Rendered::default() }
    }

    /// Appends one line.
    fn line(&mut self, text: &str) {
        self.text.push_str(text);
        self.text.push_str(if self.crlf { "\r\n" } else { "\n" });
        self.lines += 1;
    }

    /// Appends a record's line.
    fn record(&mut self, text: &str, time_ns: u64, volume: u32, op: TraceOp, offset: u64, len: u64) {
        self.line(text);
        self.want.push(TraceRecord {
            line: self.lines,
            time_ns: Some(time_ns),
            volume,
            op,
            offset,
            len,
            queue: None,
        });
    }

    /// Appends the noise lines `bits` asks for; a garbage line too if `garbage`.
    fn noise(&mut self, bits: u16, garbage: bool) {
        if bits & 0x100 != 0 {
            self.line("");
        }
        if bits & 0x200 != 0 {
            self.line("# a comment, 1,2,3,r,0.5");
        }
        if bits & 0x400 != 0 {
            self.line(" \t ");
        }
        if garbage && bits & 0x800 != 0 {
            self.line("9x garbage,line");
            self.garbage.push(self.lines);
        }
    }
}

/// `(offset, len)` in bytes from raw values, with `offset + len` in range.
fn fit(offset: u64, len: u64) -> (u64, u64) {
    let len = if offset == 0 { len } else { len % (u64::MAX - offset + 1) };
    (offset, len)
}

/// `(offset, len)` in 512-byte sectors from raw values, with the byte end in range.
fn fit_sectors(offset: u64, len: u64) -> (u64, u64) {
    let offset = offset % (u64::MAX / 512 + 1);
    let room = (u64::MAX - offset * 512) / 512;
    (offset, len % (room + 1))
}

/// Seconds with nine decimals, or fewer when `short` and the trailing digits are zeros.
fn seconds(ns: u64, short: bool) -> String {
    let text = format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    if short { text.trim_end_matches('0').to_string() } else { text }
}

/// Small volume numbers for names, in order of first appearance.
#[derive(Default)]
struct Names(HashMap<u32, u32>);

impl Names {
    fn id(&mut self, key: u32) -> u32 {
        let next = self.0.len() as u32;
        *self.0.entry(key).or_insert(next)
    }
}

/// SPC, with padded fields, either-case opcodes, extra fields and short timestamps.
pub(super) fn spc(raws: &[Raw], crlf: bool, garbage: bool) -> Rendered {
    let mut out = Rendered::new(crlf);
    for r in raws {
        out.noise(r.noise, garbage);
        let lba = r.offset % (u64::MAX / 512 + 1);
        let (_, len) = fit(lba * 512, r.len);
        let op = if r.op % 2 == 0 { TraceOp::Read } else { TraceOp::Write };
        let letter = match (op, r.noise & 1 != 0) {
            (TraceOp::Read, false) => "r",
            (TraceOp::Read, true) => "R",
            (_, false) => "w",
            (_, true) => "W",
        };
        let pad = if r.noise & 2 != 0 { " " } else { "" };
        let extra = if r.noise & 4 != 0 { ",extra,7" } else { "" };
        let time = seconds(r.time, r.noise & 8 != 0);
        out.record(
            &format!("{0}{1}{0},{2},{0}{3},{4},{5}{6}", pad, r.volume, lba, len, letter, time, extra),
            r.time,
            r.volume,
            op,
            lba * 512,
            len,
        );
    }
    out
}

/// MSR Cambridge, with either-case types.
pub(super) fn msr(raws: &[Raw], crlf: bool, garbage: bool) -> Rendered {
    let mut out = Rendered::new(crlf);
    for r in raws {
        out.noise(r.noise, garbage);
        let (offset, len) = fit(r.offset, r.len);
        let ticks = r.time / 100;
        let op = if r.op % 2 == 0 { TraceOp::Read } else { TraceOp::Write };
        let word = match (op, r.noise & 1 != 0) {
            (TraceOp::Read, false) => "Read",
            (TraceOp::Read, true) => "READ",
            (_, false) => "Write",
            (_, true) => "write",
        };
        let text = format!("{ticks},host{},{},{word},{offset},{len},{}", r.op, r.volume, r.noise);
        out.record(&text, ticks * 100, r.volume, op, offset, len);
    }
    out
}

/// MQSim, with tabs or runs of spaces.
pub(super) fn mqsim(raws: &[Raw], crlf: bool, garbage: bool) -> Rendered {
    let mut out = Rendered::new(crlf);
    for r in raws {
        out.noise(r.noise, garbage);
        let (lba, sectors) = fit_sectors(r.offset, r.len);
        let op = if r.op % 2 == 0 { TraceOp::Read } else { TraceOp::Write };
        let sep = if r.noise & 1 != 0 { "\t" } else { "  " };
        let kind = if op == TraceOp::Read { 1 } else { 0 };
        let text = format!("{}{sep}{}{sep}{lba}{sep}{sectors}{sep}{kind}", r.time, r.volume);
        out.record(&text, r.time, r.volume, op, lba * 512, sectors * 512);
    }
    out
}

/// blkparse output: each record's `Q` event among other events of the same device, and the
/// summary trailer at the end.
pub(super) fn blkparse(raws: &[Raw], crlf: bool, garbage: bool) -> Rendered {
    let mut out = Rendered::new(crlf);
    let mut names = Names::default();
    for (seq, r) in raws.iter().enumerate() {
        out.noise(r.noise, garbage);
        let device = r.volume % 4;
        let dev = format!("{:>3},{:<3}", 8 + device / 2, 16 * (device % 2));
        let time = seconds(r.time, false);
        let head =
            |action: &str| format!("{dev} {:>2} {seq:>8} {time:>14} {:>5}  {action}", r.noise % 4, r.op);
        if r.noise & 0x1000 != 0 {
            out.line(&format!("{} N cfq{} queued", head("m"), r.op));
        }
        let (sector, count) = fit_sectors(r.offset, r.len);
        let (op, rwbs, text_after) = match r.op % 4 {
            0 => (
                TraceOp::Read,
                ["R", "RA", "RM", "RS"][usize::from(r.noise % 4)],
                format!("{sector} + {count} [cat]"),
            ),
            1 if count == 0 => {
                (TraceOp::Write, ["W", "WS"][usize::from(r.noise % 2)], format!("{sector} + 0 [dd]"))
            }
            1 => (
                TraceOp::Write,
                ["W", "WS", "FWS", "WFS"][usize::from(r.noise % 4)],
                format!("{sector} + {count} [dd]"),
            ),
            2 => (TraceOp::Trim, "D", format!("{sector} + {count} [fstrim]")),
            _ => (TraceOp::Flush, ["FWS", "FN", "F"][usize::from(r.noise % 3)], "[jbd2/sda1-8]".to_string()),
        };
        let (offset, len) = if op == TraceOp::Flush { (0, 0) } else { (sector * 512, count * 512) };
        let volume = names.id(device);
        out.record(&format!("{} {rwbs:>3} {text_after}", head("Q")), r.time, volume, op, offset, len);
        if let Some(want) = out.want.last_mut() {
            want.queue = Some(u32::from(r.noise % 4));
        }
        if r.noise & 0x2000 != 0 {
            out.line(&format!("{} {rwbs:>3} {text_after}", head("G")));
            out.line(&format!("{} {rwbs:>3} {sector} + {count} [0]", head("C")));
        }
    }
    out.line("CPU0 (8,0):");
    out.line(" Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB");
    out.line("Throughput (R/W): 0KiB/s / 18KiB/s");
    out.line("Events (8,0): 9 entries");
    out
}

/// A fio iolog: version 2 with waits, or version 3 with microsecond timestamps.
pub(super) fn iolog(raws: &[Raw], crlf: bool, garbage: bool, version: u8) -> Rendered {
    let mut out = Rendered::new(crlf);
    let mut names = Names::default();
    let mut clock_ns = 0u64;
    out.line(&format!("fio version {version} iolog"));
    for r in raws {
        out.noise(r.noise, garbage);
        let file = r.volume % 4;
        let name = format!("/dev/disk{file}");
        let v3_us = r.time / 1000;
        let stamp = if version == 3 { format!("{v3_us} ") } else { String::new() };
        if !names.0.contains_key(&file) && r.noise & 0x1000 != 0 {
            out.line(&format!("{stamp}{name} add"));
            out.line(&format!("{stamp}{name} open"));
        }
        let volume = names.id(file);
        if version == 2 {
            let wait_us = r.time % 10_000_000;
            if wait_us > 0 || r.noise & 0x2000 != 0 {
                let length = if r.noise & 0x4000 != 0 { " 0" } else { "" };
                out.line(&format!("{name} wait {wait_us}{length}"));
                clock_ns += wait_us * 1000;
            }
        }
        let time = if version == 3 { v3_us * 1000 } else { clock_ns };
        let (offset, len) = fit(r.offset, r.len);
        let (op, action) = match r.op % 5 {
            0 => (TraceOp::Read, "read"),
            1 => (TraceOp::Write, "write"),
            2 => (TraceOp::Trim, "trim"),
            3 => (TraceOp::Flush, "sync"),
            _ => (TraceOp::Flush, "datasync"),
        };
        if op == TraceOp::Flush && r.noise & 1 != 0 {
            out.record(&format!("{stamp}{name} {action}"), time, volume, op, 0, 0);
        } else {
            out.record(&format!("{stamp}{name} {action} {offset} {len}"), time, volume, op, offset, len);
        }
        if r.noise & 0x8000 != 0 {
            out.line(&format!("{stamp}{name} close"));
        }
    }
    out
}
