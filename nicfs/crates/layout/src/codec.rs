//! Little-endian field access and checksums.

use crate::LayoutError;

/// CRC32 (IEEE) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

pub(crate) fn need(what: &'static str, buf: &[u8], n: usize) -> Result<(), LayoutError> {
    if buf.len() < n {
        return Err(LayoutError::Truncated { what, need: n, got: buf.len() });
    }
    Ok(())
}

pub(crate) fn get_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub(crate) fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

pub(crate) fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

pub(crate) fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Verifies a CRC32 stored at `at` over `b[..at]`.
pub(crate) fn check_crc(what: &'static str, b: &[u8], at: usize) -> Result<(), LayoutError> {
    let stored = get_u32(b, at);
    let computed = crc32(&b[..at]);
    if stored != computed {
        return Err(LayoutError::BadChecksum { what, stored, computed });
    }
    Ok(())
}
