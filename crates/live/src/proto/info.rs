//! The payloads of `NBD_OPT_INFO` / `NBD_OPT_GO` (export name and information requests) and of
//! their `NBD_REP_INFO` answers.
//!
//! ```text
//! C: name-length(32) name  count(16)  info-type(16) x count
//! S: info-type(16) payload      EXPORT: size(64) flags(16)   BLOCK_SIZE: min(32) pref(32) max(32)
//! ```

use super::consts::*;
use super::flags::TransmissionFlags;
use super::wire::{Cursor, ProtoError, decode_string};

/// The data of `NBD_OPT_INFO` and `NBD_OPT_GO`: an export name and the information requested.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfoRequest {
    /// The export name (empty = the default export).
    pub name: String,
    /// Requested `NBD_INFO_*` types, in the client's order.
    pub requests: Vec<u16>,
}

impl InfoRequest {
    /// The option data on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(6 + self.name.len() + 2 * self.requests.len());
        out.extend_from_slice(&(self.name.len() as u32).to_be_bytes());
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(&(self.requests.len() as u16).to_be_bytes());
        for r in &self.requests {
            out.extend_from_slice(&r.to_be_bytes());
        }
        out
    }

    /// Parses the option data; the lengths must account for every byte.
    pub fn decode(data: &[u8]) -> Result<InfoRequest, ProtoError> {
        let mut c = Cursor::new(data);
        let name_len = c.u32("export name length")? as usize;
        if name_len > data.len().saturating_sub(6) {
            return Err(ProtoError::BadLength { what: "export name", len: name_len as u64 });
        }
        let name = decode_string(c.bytes(name_len, "export name")?, "export name")?;
        let count = c.u16("information request count")? as usize;
        if c.remaining() != 2 * count {
            return Err(ProtoError::BadLength { what: "information requests", len: count as u64 });
        }
        let requests = (0..count).map(|_| c.u16("information request")).collect::<Result<_, _>>()?;
        c.finish("NBD_OPT_INFO/GO data")?;
        Ok(InfoRequest { name, requests })
    }
}

/// One `NBD_REP_INFO` payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Info {
    /// `NBD_INFO_EXPORT`: size in bytes and transmission flags (mandatory before success).
    Export {
        /// Export size in bytes.
        size: u64,
        /// Transmission flags.
        flags: TransmissionFlags,
    },
    /// `NBD_INFO_NAME`: the canonical export name.
    Name(String),
    /// `NBD_INFO_DESCRIPTION`: a description for humans.
    Description(String),
    /// `NBD_INFO_BLOCK_SIZE`: minimum, preferred and maximum block sizes.
    BlockSize {
        /// Minimum block size (alignment of every offset and length).
        min: u32,
        /// Preferred block size.
        preferred: u32,
        /// Maximum request payload.
        max: u32,
    },
    /// An information type this crate does not know.
    Unknown {
        /// The information type.
        kind: u16,
        /// Its payload after the type field.
        data: Vec<u8>,
    },
}

impl Info {
    /// The reply data on the wire (type field included).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Info::Export { size, flags } => {
                out.extend_from_slice(&INFO_EXPORT.to_be_bytes());
                out.extend_from_slice(&size.to_be_bytes());
                out.extend_from_slice(&flags.bits().to_be_bytes());
            }
            Info::Name(s) | Info::Description(s) => {
                let kind = if matches!(self, Info::Name(_)) { INFO_NAME } else { INFO_DESCRIPTION };
                out.extend_from_slice(&kind.to_be_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            Info::BlockSize { min, preferred, max } => {
                out.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
                for v in [min, preferred, max] {
                    out.extend_from_slice(&v.to_be_bytes());
                }
            }
            Info::Unknown { kind, data } => {
                out.extend_from_slice(&kind.to_be_bytes());
                out.extend_from_slice(data);
            }
        }
        out
    }

    /// Parses reply data; fixed-size types must have exactly their length (12 and 14).
    pub fn decode(data: &[u8]) -> Result<Info, ProtoError> {
        let mut c = Cursor::new(data);
        let info = match c.u16("information type")? {
            INFO_EXPORT => {
                let info =
                    Info::Export { size: c.u64("export size")?, flags: TransmissionFlags(c.u16("flags")?) };
                c.finish("NBD_INFO_EXPORT")?;
                info
            }
            INFO_NAME => Info::Name(decode_string(c.rest(), "NBD_INFO_NAME")?),
            INFO_DESCRIPTION => Info::Description(decode_string(c.rest(), "NBD_INFO_DESCRIPTION")?),
            INFO_BLOCK_SIZE => {
                let info = Info::BlockSize {
                    min: c.u32("minimum block size")?,
                    preferred: c.u32("preferred block size")?,
                    max: c.u32("maximum block size")?,
                };
                c.finish("NBD_INFO_BLOCK_SIZE")?;
                info
            }
            kind => Info::Unknown { kind, data: c.rest().to_vec() },
        };
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9:/._ -]{0,40}"
    }

    proptest! {
        #[test]
        fn info_request_round_trips(name in name(), requests in proptest::collection::vec(any::<u16>(), 0..20)) {
            let r = InfoRequest { name, requests };
            prop_assert_eq!(InfoRequest::decode(&r.encode()), Ok(r));
        }

        #[test]
        fn infos_round_trip(size: u64, flags: u16, s in name(), min: u32, preferred: u32, max: u32,
                            kind in 4u16.., data in proptest::collection::vec(any::<u8>(), 0..32)) {
            for info in [
                Info::Export { size, flags: TransmissionFlags(flags) },
                Info::Name(s.clone()),
                Info::Description(s.clone()),
                Info::BlockSize { min, preferred, max },
                Info::Unknown { kind, data: data.clone() },
            ] {
                prop_assert_eq!(Info::decode(&info.encode()), Ok(info));
            }
        }

        #[test]
        fn decoders_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = InfoRequest::decode(&data);
            let _ = Info::decode(&data);
        }
    }

    #[test]
    fn layouts_match_the_specification() {
        let info = Info::Export { size: 0x1000, flags: TransmissionFlags(1) }.encode();
        assert_eq!(info, b"\x00\x00\x00\x00\x00\x00\x00\x00\x10\x00\x00\x01");
        assert_eq!(Info::BlockSize { min: 1, preferred: 4096, max: 1 << 25 }.encode().len(), 14);
        let go = InfoRequest { name: "ab".into(), requests: vec![INFO_BLOCK_SIZE] }.encode();
        assert_eq!(go, b"\x00\x00\x00\x02ab\x00\x01\x00\x03");
    }

    #[test]
    fn malformed_info_requests_are_rejected() {
        // Name length larger than the data allows (must be <= length - 6).
        assert!(InfoRequest::decode(b"\x00\x00\x00\x05ab\x00\x00").is_err());
        // Request count disagrees with the bytes present.
        assert!(InfoRequest::decode(b"\x00\x00\x00\x00\x00\x02\x00\x03").is_err());
        // Too short to hold the fixed fields.
        assert!(InfoRequest::decode(b"\x00\x00").is_err());
        // Export name with a NUL.
        assert!(InfoRequest::decode(b"\x00\x00\x00\x02a\x00\x00\x00").is_err());
        assert!(Info::decode(b"\x00\x00\x00").is_err());
        assert!(Info::decode(b"\x00\x03\x00\x00\x00\x01").is_err());
    }
}
