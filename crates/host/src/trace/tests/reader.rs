//! The reader around the parsers: format names, detection, decompression, bad-line handling,
//! and I/O errors.

use std::io::{self, Write};
use std::str::FromStr;

use super::*;

const SPC: &str = "0,1,512,r,0.1\n1,2,1024,w,0.2\n";

#[test]
fn format_names() {
    for (name, format) in [
        ("spc", TraceFormat::Spc),
        ("msr", TraceFormat::Msr),
        ("mqsim", TraceFormat::Mqsim),
        ("disksim", TraceFormat::Mqsim),
        ("DiskSim", TraceFormat::Mqsim),
        ("blkparse", TraceFormat::Blkparse),
        ("iolog", TraceFormat::Iolog),
        ("recording", TraceFormat::Recording),
    ] {
        assert_eq!(TraceFormat::from_str(name), Ok(format));
    }
    for format in TraceFormat::ALL {
        assert_eq!(format.to_string().parse::<TraceFormat>(), Ok(format));
    }
    assert_eq!(
        "csv".parse::<TraceFormat>().unwrap_err().to_string(),
        "unknown trace format 'csv' (expected spc, msr, mqsim, disksim, blkparse, iolog or recording)"
    );
}

#[test]
fn detection_skips_comments_headers_and_corrupt_first_lines() {
    let cases = [
        ("\n# comment\n\n0,1,512,r,0.1\n", TraceFormat::Spc),
        (
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n1,hm,0,Read,0,512,1\n",
            TraceFormat::Msr,
        ),
        ("0 0 0 8 7\n1 0 0 8 1\n", TraceFormat::Mqsim),
        ("fio version 3 iolog\n0 f add\n", TraceFormat::Iolog),
        ("CPU0 (8,0):\n  8,0 0 1 0.1 1 Q R 0 + 8 [a]\n", TraceFormat::Blkparse),
        ("\u{feff}1,hm,0,Read,0,512,1\r\n", TraceFormat::Msr),
    ];
    for (text, format) in cases {
        let mut r = reader(None, text);
        assert_eq!(r.format(), format, "{text:?}");
        // Parsing starts from line 1 again: a header row is a bad line, not lost.
        if text.starts_with("Timestamp") {
            assert!(r.next().unwrap().unwrap_err().to_string().starts_with("t:1: bad Timestamp"));
        }
    }
    let detected: Vec<_> =
        reader(None, "# c\n0,1,512,r,0.1\n\n1,2,512,w,0.2\n").map(Result::unwrap).collect();
    assert_eq!(detected.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 4]);
    // A byte order mark is dropped from the first line only.
    assert_eq!(records(TraceFormat::Spc, "\u{feff}0,1,512,r,0.1\n").len(), 1);
    assert_eq!(error(TraceFormat::Spc, "0,1,512,r,0.1\n\u{feff}0,1,512,r,0.1\n"), "t:2: bad ASU '\u{feff}0'");
}

#[test]
fn undetectable_and_empty_traces_are_errors() {
    let open = |text: &str| {
        TraceReader::from_reader("t", Cursor::new(text.as_bytes().to_vec()), ReadOptions::default())
            .unwrap_err()
    };
    assert_eq!(
        open("\n\nhello world\nmore\n").to_string(),
        "t: cannot detect the trace format (line 3: 'hello world'); force one of spc, msr, mqsim, blkparse, iolog"
    );
    assert_eq!(
        open("# only\n\n   \r\n").to_string(),
        "t: empty trace (no lines to detect the format from); force a format to read it"
    );
    assert_eq!(
        open("").to_string(),
        "t: empty trace (no lines to detect the format from); force a format to read it"
    );
    // A line with the shape of one format: that format's error, as forcing it gives.
    let huge = "0,999999999999999999999,4096,r,0.1\n";
    assert_eq!(
        open(huge).to_string(),
        "t:1: LBA '999999999999999999999' is too large (does not fit in u64 bytes) (the line looks like spc; \
         --format forces a format)"
    );
    assert_eq!(
        error(TraceFormat::Spc, huge),
        "t:1: LBA '999999999999999999999' is too large (does not fit in u64 bytes)"
    );
    assert_eq!(
        open("# mqsim\n10 0 8 8 2\n10 0 8 8 3\n").to_string(),
        "t:2: bad type '2' (the line looks like mqsim; --format forces a format)",
        "the first such line"
    );
    // A forced format reads an empty trace as no records.
    assert_eq!(reader(Some(TraceFormat::Spc), "").count(), 0);
}

/// `text` compressed with `compression`.
fn compress(compression: Compression, text: &[u8]) -> Vec<u8> {
    match compression {
        Compression::None => text.to_vec(),
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(text).unwrap();
            e.finish().unwrap()
        }
        Compression::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
            e.write_all(text).unwrap();
            e.finish().unwrap()
        }
        Compression::Zstd => zstd::encode_all(text, 3).unwrap(),
    }
}

#[test]
fn compressed_traces_read_the_same() {
    let plain: Vec<_> = reader(None, SPC).map(Result::unwrap).collect();
    for compression in [Compression::None, Compression::Gzip, Compression::Bzip2, Compression::Zstd] {
        let bytes = compress(compression, SPC.as_bytes());
        // Also through a reader that returns one byte at a time.
        let trickle = io::BufReader::with_capacity(1, Cursor::new(bytes.clone()));
        for r in [
            TraceReader::from_reader("t", Cursor::new(bytes), ReadOptions::default()).unwrap(),
            TraceReader::from_reader("t", trickle, ReadOptions::default()).unwrap(),
        ] {
            assert_eq!(r.compression(), compression);
            assert_eq!(r.format(), TraceFormat::Spc);
            assert_eq!(r.map(Result::unwrap).collect::<Vec<_>>(), plain, "{compression:?}");
        }
    }
    // Concatenated gzip members are one text.
    let mut two = compress(Compression::Gzip, b"0,1,512,r,0.1\n");
    two.extend(compress(Compression::Gzip, b"1,2,1024,w,0.2\n"));
    let r = TraceReader::from_reader("t", Cursor::new(two), ReadOptions::default()).unwrap();
    assert_eq!(r.map(Result::unwrap).collect::<Vec<_>>(), plain);
}

#[test]
fn a_truncated_compressed_trace_is_a_read_error_that_ends_the_trace() {
    let text: String = (0..5000).map(|i| format!("0,{i},512,r,0.{i:06}\n")).collect();
    let mut bytes = compress(Compression::Gzip, text.as_bytes());
    bytes.truncate(bytes.len() / 2);
    let mut r = TraceReader::from_reader("w.spc.gz", Cursor::new(bytes), ReadOptions::default()).unwrap();
    let oks = r.by_ref().take_while(Result::is_ok).count();
    assert!(oks > 100 && oks < 5000, "{oks}");
    assert_eq!(r.next().map(|_| ()), None, "the reader is fused after an error");
    let mut bytes = compress(Compression::Gzip, text.as_bytes());
    bytes.truncate(bytes.len() / 2);
    let err = TraceReader::from_reader("w.spc.gz", Cursor::new(bytes), ReadOptions::default())
        .unwrap()
        .find_map(Result::err)
        .unwrap()
        .to_string();
    assert!(err.starts_with(&format!("w.spc.gz:{}: read error: ", oks + 1)), "{err}");
}

#[test]
fn bad_lines_stop_the_reader_or_are_counted_and_skipped() {
    let text = "0,1,512,r,0.1\n0,x1,512,r,0.2\n1,2,512,w,0.3\n0,1,512,q,0.4\n2,3,512,r,0.5\n";
    let mut stop = reader(Some(TraceFormat::Spc), text);
    assert_eq!(stop.next().unwrap().unwrap().line, 1);
    assert_eq!(stop.next().unwrap().unwrap_err().to_string(), "t:2: bad LBA 'x1'");
    assert!(stop.next().is_none(), "stops at the first bad line");
    assert_eq!(stop.bad_lines(), 0);

    let options =
        ReadOptions { format: Some(TraceFormat::Spc), skip_bad_lines: true, ..ReadOptions::default() };
    let mut skip = TraceReader::from_reader("t", Cursor::new(text.as_bytes().to_vec()), options).unwrap();
    let lines: Vec<_> = skip.by_ref().map(|r| r.unwrap().line).collect();
    assert_eq!(lines, [1, 3, 5]);
    assert_eq!(skip.bad_lines(), 2);
    assert_eq!(skip.records(), 3);
    assert_eq!(skip.first_bad_line().unwrap().to_string(), "t:2: bad LBA 'x1'");
}

#[test]
fn an_overlong_line_is_a_bad_line_and_is_not_kept() {
    let long = format!("0,1,512,r,0.1\n{}\n1,2,512,w,0.2\n", "9".repeat(MAX_LINE_BYTES * 3));
    assert_eq!(error(TraceFormat::Spc, &long), format!("t:2: line longer than {MAX_LINE_BYTES} bytes"));
    let options =
        ReadOptions { format: Some(TraceFormat::Spc), skip_bad_lines: true, ..ReadOptions::default() };
    let mut r = TraceReader::from_reader("t", Cursor::new(long.into_bytes()), options).unwrap();
    assert_eq!(r.by_ref().map(|r| r.unwrap().line).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(r.bad_lines(), 1);
}

#[test]
fn open_reads_files_and_names_them_in_errors() {
    let missing = Path::new("/nonexistent/ssdlab/trace.spc");
    let err = TraceReader::open(missing, ReadOptions::default()).unwrap_err().to_string();
    assert!(err.starts_with("/nonexistent/ssdlab/trace.spc: "), "{err}");

    let dir = std::env::temp_dir().join(format!("ssdlab-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.spc.zst");
    std::fs::write(&path, compress(Compression::Zstd, b"0,1,512,r,0.1\n0,x1,512,r,0.2\n")).unwrap();
    let mut r = TraceReader::open(&path, ReadOptions::default()).unwrap();
    assert_eq!(
        (r.format(), r.compression(), r.name()),
        (TraceFormat::Spc, Compression::Zstd, path.to_str().unwrap())
    );
    assert!(r.next().unwrap().is_ok());
    let err = r.next().unwrap().unwrap_err().to_string();
    assert_eq!(err, format!("{}:2: bad LBA 'x1'", path.display()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_quote_at_most_forty_characters_on_one_line() {
    let value = format!("x{}\u{7}", "y".repeat(60));
    let got = error(TraceFormat::Spc, &format!("0,{value},512,r,0\n"));
    assert_eq!(got, format!("t:1: bad LBA 'x{}...'", "y".repeat(39)));
    assert_eq!(error(TraceFormat::Spc, "0,\u{1b}[2J,512,r,0\n"), "t:1: bad LBA '\\u{1b}[2J'");
    let mut bytes = b"0,".to_vec();
    bytes.extend([0xff, 0xfe]);
    bytes.extend(b",512,r,0\n");
    let options = ReadOptions::with_format(TraceFormat::Spc);
    let mut r = TraceReader::from_reader("t", Cursor::new(bytes), options).unwrap();
    let text = r.next().unwrap().unwrap_err().to_string();
    assert_eq!(text, "t:1: bad LBA '\u{fffd}\u{fffd}'");
}

#[test]
fn options_deserialize_with_defaults() {
    #[derive(serde::Deserialize)]
    struct Wrapper {
        trace: ReadOptions,
    }
    let w: Wrapper = toml::from_str("[trace]\nformat = \"disksim\"\n").unwrap();
    assert_eq!(w.trace, ReadOptions::with_format(TraceFormat::Mqsim));
    let w: Wrapper = toml::from_str("[trace]\nskip_bad_lines = true\nblkparse_action = \"D\"\n").unwrap();
    assert_eq!(w.trace, ReadOptions { format: None, skip_bad_lines: true, blkparse_action: 'D' });
    assert!(toml::from_str::<Wrapper>("[trace]\nskip = true\n").is_err());
}
