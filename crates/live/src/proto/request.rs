//! The transmission request header.
//!
//! ```text
//! C: 0x25609513  flags(16)  type(16)  cookie(64)  offset(64)  length(32)  [data if WRITE]
//! ```

use super::consts::*;
use super::flags::CmdFlags;
use super::wire::{Cursor, ProtoError};

/// A request type (`NBD_CMD_*`); unnamed codes are kept as `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `NBD_CMD_READ` (0).
    Read,
    /// `NBD_CMD_WRITE` (1): `length` bytes of data follow the header.
    Write,
    /// `NBD_CMD_DISC` (2): soft disconnect, no reply.
    Disc,
    /// `NBD_CMD_FLUSH` (3).
    Flush,
    /// `NBD_CMD_TRIM` (4).
    Trim,
    /// `NBD_CMD_CACHE` (5).
    Cache,
    /// `NBD_CMD_WRITE_ZEROES` (6).
    WriteZeroes,
    /// `NBD_CMD_BLOCK_STATUS` (7).
    BlockStatus,
    /// `NBD_CMD_RESIZE` (8, experimental).
    Resize,
    /// Any other code.
    Other(u16),
}

const COMMANDS: [(Command, u16); 9] = [
    (Command::Read, CMD_READ),
    (Command::Write, CMD_WRITE),
    (Command::Disc, CMD_DISC),
    (Command::Flush, CMD_FLUSH),
    (Command::Trim, CMD_TRIM),
    (Command::Cache, CMD_CACHE),
    (Command::WriteZeroes, CMD_WRITE_ZEROES),
    (Command::BlockStatus, CMD_BLOCK_STATUS),
    (Command::Resize, CMD_RESIZE),
];

impl Command {
    /// The command for a wire code.
    pub fn from_code(code: u16) -> Command {
        COMMANDS.iter().find(|(_, c)| *c == code).map_or(Command::Other(code), |(k, _)| *k)
    }

    /// The wire code.
    pub fn code(self) -> u16 {
        match self {
            Command::Other(code) => code,
            known => COMMANDS.iter().find(|(k, _)| *k == known).map_or(0, |(_, c)| *c),
        }
    }
}

/// A decoded request header (the payload of a write is read separately).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    /// Command flags.
    pub flags: CmdFlags,
    /// Request type.
    pub command: Command,
    /// The client's cookie (a.k.a. handle), echoed in the reply.
    pub cookie: u64,
    /// Byte offset into the export.
    pub offset: u64,
    /// Length in bytes.
    pub length: u32,
}

impl RequestHeader {
    /// The 28 bytes on the wire.
    pub fn encode(&self) -> [u8; REQUEST_HEADER_LEN] {
        let mut out = [0u8; REQUEST_HEADER_LEN];
        out[..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        out[4..6].copy_from_slice(&self.flags.bits().to_be_bytes());
        out[6..8].copy_from_slice(&self.command.code().to_be_bytes());
        out[8..16].copy_from_slice(&self.cookie.to_be_bytes());
        out[16..24].copy_from_slice(&self.offset.to_be_bytes());
        out[24..].copy_from_slice(&self.length.to_be_bytes());
        out
    }

    /// Parses a request header, checking `NBD_REQUEST_MAGIC`.
    pub fn decode(buf: &[u8; REQUEST_HEADER_LEN]) -> Result<RequestHeader, ProtoError> {
        let mut c = Cursor::new(buf);
        let magic = c.u32("request magic")?;
        if magic != REQUEST_MAGIC {
            return Err(ProtoError::BadMagic { expected: REQUEST_MAGIC.into(), found: magic.into() });
        }
        Ok(RequestHeader {
            flags: CmdFlags(c.u16("command flags")?),
            command: Command::from_code(c.u16("command type")?),
            cookie: c.u64("cookie")?,
            offset: c.u64("offset")?,
            length: c.u32("length")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn request_header_round_trips(flags: u16, code: u16, cookie: u64, offset: u64, length: u32) {
            let h = RequestHeader { flags: CmdFlags(flags), command: Command::from_code(code), cookie, offset, length };
            prop_assert_eq!(RequestHeader::decode(&h.encode()), Ok(h));
            prop_assert_eq!(Command::from_code(code).code(), code);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::array::uniform28(any::<u8>())) {
            let _ = RequestHeader::decode(&bytes);
        }
    }

    #[test]
    fn layout_matches_the_specification() {
        let h = RequestHeader {
            flags: CmdFlags::FUA,
            command: Command::Write,
            cookie: 0x0102_0304_0506_0708,
            offset: 0x1000,
            length: 0x200,
        };
        let bytes = h.encode();
        assert_eq!(&bytes[..4], &[0x25, 0x60, 0x95, 0x13]);
        assert_eq!(&bytes[4..8], &[0, 1, 0, 1]);
        assert_eq!(&bytes[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&bytes[16..24], &[0, 0, 0, 0, 0, 0, 0x10, 0]);
        assert_eq!(&bytes[24..], &[0, 0, 2, 0]);
        let mut bad = bytes;
        bad[0] = 0x12;
        assert!(matches!(RequestHeader::decode(&bad), Err(ProtoError::BadMagic { .. })));
    }
}
