//! What a backend says about one export: size, capabilities and block-size constraints, and the
//! transmission flags the server derives from them.

use thiserror::Error;

use crate::proto::TransmissionFlags;

/// Block-size constraints of an export ("Block size constraints" in `doc/proto.md`).
///
/// Always valid: the minimum is a power of two no larger than 64 KiB, the preferred size a power
/// of two at least `max(minimum, 512)`, the maximum either `u32::MAX` (no limit of its own) or a
/// multiple of the minimum at least as large as the preferred size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSize {
    min: u32,
    preferred: u32,
    max: u32,
}

/// Why a block-size triple is not allowed by the protocol.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BlockSizeError {
    /// The minimum is not a power of two in 1..=65536.
    #[error("minimum block size {0} must be a power of two no larger than 65536")]
    Min(u32),
    /// The preferred size is not a power of two at least max(minimum, 512).
    #[error("preferred block size {0} must be a power of two, at least 512 and the minimum")]
    Preferred(u32),
    /// The maximum is neither u32::MAX nor a multiple of the minimum >= the preferred size.
    #[error("maximum block size {0} must be a multiple of the minimum and at least the preferred size")]
    Max(u32),
}

impl BlockSize {
    /// The protocol's defaults when nothing is advertised: 1 / 4096 / unlimited.
    pub const DEFAULT: BlockSize = BlockSize { min: 1, preferred: 4096, max: u32::MAX };

    /// Checked constraints.
    pub fn new(min: u32, preferred: u32, max: u32) -> Result<BlockSize, BlockSizeError> {
        if !min.is_power_of_two() || min > 65536 {
            return Err(BlockSizeError::Min(min));
        }
        if !preferred.is_power_of_two() || preferred < min.max(512) {
            return Err(BlockSizeError::Preferred(preferred));
        }
        if max != u32::MAX && (!max.is_multiple_of(min) || max < preferred) {
            return Err(BlockSizeError::Max(max));
        }
        Ok(BlockSize { min, preferred, max })
    }

    /// Smallest addressable unit: every offset and length must be a multiple of it.
    pub fn min(&self) -> u32 {
        self.min
    }

    /// Size at which aligned requests are efficient.
    pub fn preferred(&self) -> u32 {
        self.preferred
    }

    /// Largest read or write payload (`u32::MAX` = no limit of the export's own).
    pub fn max(&self) -> u32 {
        self.max
    }

    /// The constraints a server with a request-size bound of `max_request` (a power of two of at
    /// least 64 KiB) advertises: the maximum is capped at the bound, the preferred size at the
    /// maximum.
    pub fn capped(&self, max_request: u32) -> BlockSize {
        debug_assert!(max_request.is_power_of_two() && max_request >= 65536);
        let max = self.max.min(max_request);
        BlockSize { min: self.min, preferred: self.preferred.min(max), max }
    }
}

impl Default for BlockSize {
    fn default() -> Self {
        BlockSize::DEFAULT
    }
}

/// One export as a backend describes it.
///
/// The capability fields decide the transmission flags (see [`ExportInfo::flags`]) and which
/// requests the server lets through to the backend; everything defaults to off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportInfo {
    /// Canonical name (sent as `NBD_INFO_NAME`, passed to `Backend::connect`).
    pub name: String,
    /// Description for humans (`NBD_INFO_DESCRIPTION`), if any.
    pub description: Option<String>,
    /// Size in bytes.
    pub size: u64,
    /// Writes, trims and write-zeroes are refused with `EPERM` (`NBD_FLAG_READ_ONLY`).
    pub read_only: bool,
    /// `NBD_CMD_FLUSH` is supported (`NBD_FLAG_SEND_FLUSH`).
    pub can_flush: bool,
    /// `NBD_CMD_FLAG_FUA` is supported (`NBD_FLAG_SEND_FUA`).
    pub can_fua: bool,
    /// `NBD_CMD_TRIM` is supported (`NBD_FLAG_SEND_TRIM`).
    pub can_trim: bool,
    /// `NBD_CMD_WRITE_ZEROES` and `NBD_CMD_FLAG_NO_HOLE` are supported.
    pub can_write_zeroes: bool,
    /// `NBD_CMD_FLAG_FAST_ZERO` is understood (needs `can_write_zeroes`).
    pub can_fast_zero: bool,
    /// Flush and FUA effects are visible on every connection to this export when replied
    /// (`NBD_FLAG_CAN_MULTI_CONN`): true when the backend's cache, if any, is shared.
    pub can_multi_conn: bool,
    /// The export behaves like a rotational medium (`NBD_FLAG_ROTATIONAL`).
    pub rotational: bool,
    /// Block-size constraints.
    pub block_size: BlockSize,
}

impl ExportInfo {
    /// An export of `size` bytes with every capability off and default block sizes.
    pub fn new(name: impl Into<String>, size: u64) -> ExportInfo {
        ExportInfo {
            name: name.into(),
            description: None,
            size,
            read_only: false,
            can_flush: false,
            can_fua: false,
            can_trim: false,
            can_write_zeroes: false,
            can_fast_zero: false,
            can_multi_conn: false,
            rotational: false,
            block_size: BlockSize::DEFAULT,
        }
    }

    /// The transmission flags advertised for this export. `structured` says whether the client
    /// negotiated structured replies (only then is `NBD_FLAG_SEND_DF` set: every read is answered
    /// with a single data chunk). Trim and write-zeroes are not advertised on a read-only export.
    pub fn flags(&self, structured: bool) -> TransmissionFlags {
        use TransmissionFlags as F;
        let writable = !self.read_only;
        let zeroes = writable && self.can_write_zeroes;
        F::HAS_FLAGS
            .with(F::READ_ONLY, self.read_only)
            .with(F::SEND_FLUSH, self.can_flush)
            .with(F::SEND_FUA, self.can_fua)
            .with(F::ROTATIONAL, self.rotational)
            .with(F::SEND_TRIM, writable && self.can_trim)
            .with(F::SEND_WRITE_ZEROES, zeroes)
            .with(F::SEND_FAST_ZERO, zeroes && self.can_fast_zero)
            .with(F::SEND_DF, structured)
            .with(F::CAN_MULTI_CONN, self.can_multi_conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_follow_the_protocol_rules() {
        assert!(BlockSize::new(512, 4096, 1 << 25).is_ok());
        assert!(BlockSize::new(1, 512, u32::MAX).is_ok());
        assert_eq!(BlockSize::new(3, 4096, 8192), Err(BlockSizeError::Min(3)));
        assert_eq!(BlockSize::new(1 << 17, 1 << 17, 1 << 20), Err(BlockSizeError::Min(1 << 17)));
        assert_eq!(BlockSize::new(1, 256, 4096), Err(BlockSizeError::Preferred(256)));
        assert_eq!(BlockSize::new(4096, 2048, 8192), Err(BlockSizeError::Preferred(2048)));
        assert_eq!(BlockSize::new(512, 4096, 4096 + 100), Err(BlockSizeError::Max(4196)));
        assert_eq!(BlockSize::new(512, 4096, 2048), Err(BlockSizeError::Max(2048)));
    }

    #[test]
    fn capping_limits_max_and_preferred() {
        let b = BlockSize::new(512, 1 << 21, u32::MAX).unwrap().capped(1 << 20);
        assert_eq!((b.min(), b.preferred(), b.max()), (512, 1 << 20, 1 << 20));
        let b = BlockSize::DEFAULT.capped(1 << 25);
        assert_eq!((b.min(), b.preferred(), b.max()), (1, 4096, 1 << 25));
    }

    #[test]
    fn flags_follow_capabilities() {
        let mut e = ExportInfo::new("x", 1 << 20);
        assert_eq!(e.flags(false), TransmissionFlags::HAS_FLAGS);
        e.can_flush = true;
        e.can_fua = true;
        e.can_trim = true;
        e.can_write_zeroes = true;
        e.can_fast_zero = true;
        e.can_multi_conn = true;
        assert_eq!(e.flags(false).bits(), 0b1001_0110_1101);
        assert!(e.flags(true).contains(TransmissionFlags::SEND_DF));
        e.read_only = true;
        let ro = e.flags(false);
        assert!(ro.contains(TransmissionFlags::READ_ONLY | TransmissionFlags::SEND_FLUSH));
        assert!(!ro.contains(TransmissionFlags::SEND_TRIM));
        assert!(!ro.contains(TransmissionFlags::SEND_WRITE_ZEROES));
        assert!(!ro.contains(TransmissionFlags::SEND_FAST_ZERO));
    }
}
