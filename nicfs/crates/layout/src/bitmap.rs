//! Allocation bitmaps (one bit per inode or data block, LSB first).

/// Reads bit `i` of `bits`; out-of-range bits read as set (never allocatable).
pub fn bit_get(bits: &[u8], i: u64) -> bool {
    bits.get((i / 8) as usize).is_none_or(|b| b & (1 << (i % 8)) != 0)
}

/// Sets bit `i` to `v`; out-of-range bits are ignored.
pub fn bit_set(bits: &mut [u8], i: u64, v: bool) {
    if let Some(b) = bits.get_mut((i / 8) as usize) {
        if v {
            *b |= 1 << (i % 8);
        } else {
            *b &= !(1 << (i % 8));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_and_out_of_range() {
        let mut b = [0u8; 2];
        bit_set(&mut b, 9, true);
        assert!(bit_get(&b, 9));
        assert!(!bit_get(&b, 8));
        assert!(bit_get(&b, 100));
        bit_set(&mut b, 100, false);
        bit_set(&mut b, 9, false);
        assert_eq!(b, [0, 0]);
    }
}
