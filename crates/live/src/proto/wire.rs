//! Big-endian field access for decoders: a cursor that reports truncation as an error instead of
//! panicking, and the error type every decoder returns.

use thiserror::Error;

/// Why a piece of wire data could not be decoded.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ProtoError {
    /// A magic number did not match.
    #[error("bad magic: expected {expected:#x}, found {found:#x}")]
    BadMagic {
        /// The magic the protocol requires here.
        expected: u64,
        /// What arrived.
        found: u64,
    },
    /// The data ended before a field did.
    #[error("truncated: {what} needs {needed} more bytes")]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// How many bytes were missing.
        needed: usize,
    },
    /// Bytes were left over after the last field.
    #[error("{extra} trailing bytes after {what}")]
    Trailing {
        /// The message being decoded.
        what: &'static str,
        /// How many bytes were left over.
        extra: usize,
    },
    /// A length field disagrees with the data around it.
    #[error("bad length for {what}: {len}")]
    BadLength {
        /// The message being decoded.
        what: &'static str,
        /// The offending length.
        len: u64,
    },
    /// A string is not valid UTF-8, contains NUL, or is longer than 4096 bytes.
    #[error("invalid string in {what}")]
    BadString {
        /// The field holding the string.
        what: &'static str,
    },
}

/// Reads big-endian fields from a byte slice; every read checks the remaining length.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ProtoError> {
        if n > self.buf.len() {
            return Err(ProtoError::Truncated { what, needed: n - self.buf.len() });
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], ProtoError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N, what)?);
        Ok(out)
    }

    /// A big-endian `u16`.
    pub fn u16(&mut self, what: &'static str) -> Result<u16, ProtoError> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    /// A big-endian `u32`.
    pub fn u32(&mut self, what: &'static str) -> Result<u32, ProtoError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    /// A big-endian `u64`.
    pub fn u64(&mut self, what: &'static str) -> Result<u64, ProtoError> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }

    /// Everything not yet read.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }

    /// Fails if any bytes are left.
    pub fn finish(&self, what: &'static str) -> Result<(), ProtoError> {
        match self.buf.len() {
            0 => Ok(()),
            extra => Err(ProtoError::Trailing { what, extra }),
        }
    }
}

/// Checks a protocol string (UTF-8, no NUL, at most 4096 bytes) and returns it.
pub fn decode_string(bytes: &[u8], what: &'static str) -> Result<String, ProtoError> {
    if bytes.len() > super::consts::MAX_STRING_LEN || bytes.contains(&0) {
        return Err(ProtoError::BadString { what });
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtoError::BadString { what })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_reads_fields_and_reports_truncation() {
        let data = [0, 1, 0, 0, 0, 2, 9];
        let mut c = Cursor::new(&data);
        assert_eq!(c.u16("a").unwrap(), 1);
        assert_eq!(c.u32("b").unwrap(), 2);
        assert_eq!(c.finish("msg"), Err(ProtoError::Trailing { what: "msg", extra: 1 }));
        assert_eq!(c.u64("c"), Err(ProtoError::Truncated { what: "c", needed: 7 }));
        assert_eq!(c.rest(), &[9]);
        assert!(c.finish("msg").is_ok());
    }

    #[test]
    fn strings_must_be_utf8_without_nul_and_short() {
        assert_eq!(decode_string(b"disk", "name").unwrap(), "disk");
        assert!(decode_string(b"a\0b", "name").is_err());
        assert!(decode_string(&[0xff, 0xfe], "name").is_err());
        assert!(decode_string(&[b'x'; 4097], "name").is_err());
        assert!(decode_string(&[b'x'; 4096], "name").is_ok());
    }
}
