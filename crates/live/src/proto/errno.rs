//! The error values of transmission replies ("Error values" in `doc/proto.md`).

use std::fmt;

/// An NBD error value, carried in a simple reply's error field or an error chunk.
///
/// The protocol restricts errors to this set; the numbers are the common Linux `errno` values,
/// but they are protocol constants, not the host's `errno`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Errno {
    /// `NBD_EPERM` (1): a write, trim or write-zeroes on a read-only export.
    Perm,
    /// `NBD_EIO` (5): the device failed (e.g. an uncorrectable read).
    Io,
    /// `NBD_ENOMEM` (12): the server could not allocate memory (avoid if at all possible).
    NoMem,
    /// `NBD_EINVAL` (22): an invalid request (bad flags, unknown command, out-of-range read or
    /// trim, misaligned or oversized request).
    Inval,
    /// `NBD_ENOSPC` (28): a write or write-zeroes beyond the end of the export, or the device
    /// is full.
    NoSpc,
    /// `NBD_EOVERFLOW` (75): a `NBD_CMD_FLAG_DF` read too large to send in one chunk.
    Overflow,
    /// `NBD_ENOTSUP` (95): a `NBD_CMD_FLAG_FAST_ZERO` write-zeroes that would not be fast.
    NotSup,
    /// `NBD_ESHUTDOWN` (108): the server is shutting down.
    Shutdown,
}

impl Errno {
    /// Every defined value, in numeric order.
    pub const ALL: [Errno; 8] = [
        Errno::Perm,
        Errno::Io,
        Errno::NoMem,
        Errno::Inval,
        Errno::NoSpc,
        Errno::Overflow,
        Errno::NotSup,
        Errno::Shutdown,
    ];

    /// The value sent on the wire.
    pub const fn code(self) -> u32 {
        match self {
            Errno::Perm => 1,
            Errno::Io => 5,
            Errno::NoMem => 12,
            Errno::Inval => 22,
            Errno::NoSpc => 28,
            Errno::Overflow => 75,
            Errno::NotSup => 95,
            Errno::Shutdown => 108,
        }
    }

    /// The error for a wire value; `None` for values the protocol does not define (a client
    /// should treat those as `EINVAL`).
    pub fn from_code(code: u32) -> Option<Errno> {
        Errno::ALL.into_iter().find(|e| e.code() == code)
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Errno::Perm => "EPERM",
            Errno::Io => "EIO",
            Errno::NoMem => "ENOMEM",
            Errno::Inval => "EINVAL",
            Errno::NoSpc => "ENOSPC",
            Errno::Overflow => "EOVERFLOW",
            Errno::NotSup => "ENOTSUP",
            Errno::Shutdown => "ESHUTDOWN",
        };
        write!(f, "{name} ({})", self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_specification_and_round_trip() {
        let codes: Vec<u32> = Errno::ALL.iter().map(|e| e.code()).collect();
        assert_eq!(codes, [1, 5, 12, 22, 28, 75, 95, 108]);
        for e in Errno::ALL {
            assert_eq!(Errno::from_code(e.code()), Some(e));
        }
        assert_eq!(Errno::from_code(0), None);
        assert_eq!(Errno::from_code(2), None);
        assert_eq!(Errno::Inval.to_string(), "EINVAL (22)");
    }
}
