//! Flag-field newtypes: the transmission flags an export advertises and the command flags of a
//! request. The bit values live in [`consts`](super::consts).

use std::fmt;
use std::ops::BitOr;

use super::consts::*;

macro_rules! flag_type {
    ($(#[$doc:meta])* $name:ident, $int:ty, [$(($bit:ident, $label:literal)),* $(,)?]) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub $int);

        impl $name {
            /// No flag set.
            pub const EMPTY: $name = $name(0);
            /// Every flag this type knows.
            pub const KNOWN: $name = $name(0 $(| $bit)*);

            /// The raw field.
            pub const fn bits(self) -> $int {
                self.0
            }

            /// Whether every bit of `other` is set.
            pub const fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }

            /// `self` with the bits of `other` set when `on`.
            #[must_use]
            pub const fn with(self, other: $name, on: bool) -> $name {
                if on { $name(self.0 | other.0) } else { self }
            }
        }

        impl BitOr for $name {
            type Output = $name;
            fn bitor(self, rhs: $name) -> $name {
                $name(self.0 | rhs.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut names = Vec::new();
                $(if self.0 & $bit != 0 { names.push($label); })*
                let unknown = self.0 & !Self::KNOWN.0;
                write!(f, "{}({:#x}: {}", stringify!($name), self.0, names.join("|"))?;
                if unknown != 0 {
                    write!(f, " +unknown {unknown:#x}")?;
                }
                write!(f, ")")
            }
        }
    };
}

flag_type!(
    /// The 16-bit transmission flags sent with the export size (`NBD_FLAG_*`).
    TransmissionFlags,
    u16,
    [
        (FLAG_HAS_FLAGS, "HAS_FLAGS"),
        (FLAG_READ_ONLY, "READ_ONLY"),
        (FLAG_SEND_FLUSH, "SEND_FLUSH"),
        (FLAG_SEND_FUA, "SEND_FUA"),
        (FLAG_ROTATIONAL, "ROTATIONAL"),
        (FLAG_SEND_TRIM, "SEND_TRIM"),
        (FLAG_SEND_WRITE_ZEROES, "SEND_WRITE_ZEROES"),
        (FLAG_SEND_DF, "SEND_DF"),
        (FLAG_CAN_MULTI_CONN, "CAN_MULTI_CONN"),
        (FLAG_SEND_RESIZE, "SEND_RESIZE"),
        (FLAG_SEND_CACHE, "SEND_CACHE"),
        (FLAG_SEND_FAST_ZERO, "SEND_FAST_ZERO"),
    ]
);

flag_type!(
    /// The 16-bit command flags of a request (`NBD_CMD_FLAG_*`).
    CmdFlags,
    u16,
    [
        (CMD_FLAG_FUA, "FUA"),
        (CMD_FLAG_NO_HOLE, "NO_HOLE"),
        (CMD_FLAG_DF, "DF"),
        (CMD_FLAG_REQ_ONE, "REQ_ONE"),
        (CMD_FLAG_FAST_ZERO, "FAST_ZERO"),
    ]
);

impl TransmissionFlags {
    /// `NBD_FLAG_HAS_FLAGS`.
    pub const HAS_FLAGS: Self = Self(FLAG_HAS_FLAGS);
    /// `NBD_FLAG_READ_ONLY`.
    pub const READ_ONLY: Self = Self(FLAG_READ_ONLY);
    /// `NBD_FLAG_SEND_FLUSH`.
    pub const SEND_FLUSH: Self = Self(FLAG_SEND_FLUSH);
    /// `NBD_FLAG_SEND_FUA`.
    pub const SEND_FUA: Self = Self(FLAG_SEND_FUA);
    /// `NBD_FLAG_ROTATIONAL`.
    pub const ROTATIONAL: Self = Self(FLAG_ROTATIONAL);
    /// `NBD_FLAG_SEND_TRIM`.
    pub const SEND_TRIM: Self = Self(FLAG_SEND_TRIM);
    /// `NBD_FLAG_SEND_WRITE_ZEROES`.
    pub const SEND_WRITE_ZEROES: Self = Self(FLAG_SEND_WRITE_ZEROES);
    /// `NBD_FLAG_SEND_DF`.
    pub const SEND_DF: Self = Self(FLAG_SEND_DF);
    /// `NBD_FLAG_CAN_MULTI_CONN`.
    pub const CAN_MULTI_CONN: Self = Self(FLAG_CAN_MULTI_CONN);
    /// `NBD_FLAG_SEND_FAST_ZERO`.
    pub const SEND_FAST_ZERO: Self = Self(FLAG_SEND_FAST_ZERO);
}

impl CmdFlags {
    /// `NBD_CMD_FLAG_FUA`.
    pub const FUA: Self = Self(CMD_FLAG_FUA);
    /// `NBD_CMD_FLAG_NO_HOLE`.
    pub const NO_HOLE: Self = Self(CMD_FLAG_NO_HOLE);
    /// `NBD_CMD_FLAG_DF`.
    pub const DF: Self = Self(CMD_FLAG_DF);
    /// `NBD_CMD_FLAG_REQ_ONE`.
    pub const REQ_ONE: Self = Self(CMD_FLAG_REQ_ONE);
    /// `NBD_CMD_FLAG_FAST_ZERO`.
    pub const FAST_ZERO: Self = Self(CMD_FLAG_FAST_ZERO);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_combine_and_print() {
        let f = TransmissionFlags::HAS_FLAGS | TransmissionFlags::SEND_FLUSH;
        assert!(f.contains(TransmissionFlags::SEND_FLUSH));
        assert!(!f.contains(TransmissionFlags::SEND_FUA));
        assert_eq!(f.with(TransmissionFlags::SEND_FUA, false), f);
        assert_eq!(f.with(TransmissionFlags::SEND_FUA, true).bits(), 0b1101);
        assert_eq!(format!("{f:?}"), "TransmissionFlags(0x5: HAS_FLAGS|SEND_FLUSH)");
        assert_eq!(format!("{:?}", CmdFlags(0x21)), "CmdFlags(0x21: FUA +unknown 0x20)");
        assert_eq!(CmdFlags::KNOWN.bits(), 0x1f);
    }
}
