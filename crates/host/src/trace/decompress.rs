//! Transparent decompression: the first bytes of a trace say whether it is gzip, bzip2 or
//! zstd compressed; anything else is read as plain text.

use std::io::{self, BufRead, BufReader, Cursor, Read};

use serde::{Deserialize, Serialize};

/// The decoder's output buffer, in bytes.
const BUFFER_BYTES: usize = 64 * 1024;

/// How a trace file is compressed, as its magic bytes say.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Plain text.
    None,
    /// gzip (`1f 8b`); concatenated members are read one after another.
    Gzip,
    /// bzip2 (`BZh`); concatenated streams are read one after another.
    Bzip2,
    /// zstd (`28 b5 2f fd`); concatenated frames are read one after another.
    Zstd,
}

impl Compression {
    /// The compression whose magic bytes `head` (the first up-to-four bytes) starts with.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// The text of `input`, decompressed if its magic bytes say so, and how it was compressed.
pub(crate) fn decompress(
    mut input: Box<dyn BufRead + Send>,
) -> io::Result<(Box<dyn BufRead + Send>, Compression)> {
    let mut head = [0u8; 4];
    let mut n = 0;
    while n < head.len() {
        match input.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let compression = Compression::sniff(&head[..n]);
    let whole = Cursor::new(head[..n].to_vec()).chain(input);
    let text: Box<dyn BufRead + Send> = match compression {
        Compression::None => Box::new(whole),
        Compression::Gzip => {
            Box::new(BufReader::with_capacity(BUFFER_BYTES, flate2::bufread::MultiGzDecoder::new(whole)))
        }
        Compression::Bzip2 => {
            Box::new(BufReader::with_capacity(BUFFER_BYTES, bzip2::bufread::MultiBzDecoder::new(whole)))
        }
        Compression::Zstd => {
            Box::new(BufReader::with_capacity(BUFFER_BYTES, zstd::stream::read::Decoder::with_buffer(whole)?))
        }
    };
    Ok((text, compression))
}
