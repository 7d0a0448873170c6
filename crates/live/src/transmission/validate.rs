//! Checks one request header against what was negotiated, before anything reaches the backend.
//! Every failure is an NBD error reply ("Error values" and "Block size constraints" in
//! `doc/proto.md`); none closes the connection.

use crate::export::BlockSize;
use crate::proto::{CmdFlags, Command, Errno, RequestHeader, TransmissionFlags};

/// What the transmission phase of one connection was negotiated with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    /// Export size in bytes.
    pub size: u64,
    /// The transmission flags sent to the client.
    pub flags: TransmissionFlags,
    /// The block-size constraints in force (the export's, capped by the server's request bound).
    pub block_size: BlockSize,
    /// Whether structured replies were negotiated.
    pub structured: bool,
}

/// Why a request is refused: the error value and a message for structured error replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The NBD error value sent back.
    pub errno: Errno,
    /// A short explanation for humans.
    pub message: &'static str,
}

#[cfg(test)]
impl Session {
    /// A full-featured export of `size` bytes with simple replies and requests of up to
    /// `max_request` bytes.
    pub(crate) fn for_tests(size: u64, max_request: u32) -> Session {
        let e = crate::memory::MemoryBackend::full_featured("x", size);
        Session {
            size: e.size,
            flags: e.flags(false),
            block_size: BlockSize::DEFAULT.capped(max_request),
            structured: false,
        }
    }
}

fn reject(errno: Errno, message: &'static str) -> Result<(), Rejection> {
    Err(Rejection { errno, message })
}

/// Checks a request (other than `NBD_CMD_DISC`) in this order, first failure wins:
///
/// 1. unknown or unsupported command (cache, block status, resize, ...) -> `EINVAL`;
/// 2. a command flag that is unknown, not valid for the command or not negotiated (`FUA`
///    without `SEND_FUA`, `DF` without structured replies, `FAST_ZERO` without
///    `SEND_FAST_ZERO`) -> `EINVAL`;
/// 3. write, trim or write-zeroes on a read-only export -> `EPERM`;
/// 4. flush, trim or write-zeroes not advertised -> `EINVAL`; flush with nonzero offset or
///    length -> `EINVAL`;
/// 5. range past the end of the export (or overflowing): writes and write-zeroes -> `ENOSPC`,
///    reads and trims -> `EINVAL`;
/// 6. offset or length not a multiple of the minimum block size -> `EINVAL`;
/// 7. read or write longer than the maximum block size -> `EINVAL` (trim and write-zeroes carry
///    no payload and may be longer).
pub fn validate(h: &RequestHeader, s: &Session) -> Result<(), Rejection> {
    use TransmissionFlags as T;
    let fua = if s.flags.contains(T::SEND_FUA) { CmdFlags::FUA } else { CmdFlags::EMPTY };
    let allowed = match h.command {
        Command::Read => fua.with(CmdFlags::DF, s.flags.contains(T::SEND_DF)),
        Command::Write | Command::Flush | Command::Trim => fua,
        Command::WriteZeroes => {
            (fua | CmdFlags::NO_HOLE).with(CmdFlags::FAST_ZERO, s.flags.contains(T::SEND_FAST_ZERO))
        }
        _ => return reject(Errno::Inval, "unsupported command"),
    };
    if h.flags.bits() & !allowed.bits() != 0 {
        return reject(Errno::Inval, "command flag not valid for this command or not negotiated");
    }
    let writes = matches!(h.command, Command::Write | Command::Trim | Command::WriteZeroes);
    if writes && s.flags.contains(T::READ_ONLY) {
        return reject(Errno::Perm, "export is read-only");
    }
    let advertised = match h.command {
        Command::Flush => s.flags.contains(T::SEND_FLUSH),
        Command::Trim => s.flags.contains(T::SEND_TRIM),
        Command::WriteZeroes => s.flags.contains(T::SEND_WRITE_ZEROES),
        _ => true,
    };
    if !advertised {
        return reject(Errno::Inval, "command not advertised for this export");
    }
    if h.command == Command::Flush {
        if h.offset != 0 || h.length != 0 {
            return reject(Errno::Inval, "flush offset and length must be zero");
        }
        return Ok(());
    }
    let in_range = h.offset.checked_add(h.length.into()).is_some_and(|end| end <= s.size);
    if !in_range {
        return match h.command {
            Command::Write | Command::WriteZeroes => {
                reject(Errno::NoSpc, "write beyond the end of the export")
            }
            _ => reject(Errno::Inval, "request beyond the end of the export"),
        };
    }
    let min = u64::from(s.block_size.min());
    if !h.offset.is_multiple_of(min) || !u64::from(h.length).is_multiple_of(min) {
        return reject(Errno::Inval, "request not aligned to the minimum block size");
    }
    if matches!(h.command, Command::Read | Command::Write) && h.length > s.block_size.max() {
        return reject(Errno::Inval, "request larger than the maximum block size");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::ExportInfo;

    fn session(read_only: bool, structured: bool) -> Session {
        let mut e = crate::memory::MemoryBackend::full_featured("x", 1 << 20);
        e.read_only = read_only;
        e.block_size = BlockSize::new(512, 4096, 1 << 20).unwrap();
        Session {
            size: e.size,
            flags: e.flags(structured),
            block_size: e.block_size.capped(1 << 16),
            structured,
        }
    }

    fn check(s: &Session, command: Command, flags: CmdFlags, offset: u64, length: u32) -> Option<Errno> {
        let h = RequestHeader { flags, command, cookie: 1, offset, length };
        validate(&h, s).err().map(|r| r.errno)
    }

    #[test]
    fn good_requests_pass() {
        let s = session(false, true);
        let none = CmdFlags::EMPTY;
        assert_eq!(check(&s, Command::Read, CmdFlags::DF | CmdFlags::FUA, 0, 4096), None);
        assert_eq!(check(&s, Command::Write, CmdFlags::FUA, (1 << 20) - 65536, 65536), None);
        assert_eq!(check(&s, Command::Flush, CmdFlags::FUA, 0, 0), None);
        assert_eq!(check(&s, Command::Trim, none, 0, 1 << 20), None);
        let wz = CmdFlags::NO_HOLE | CmdFlags::FAST_ZERO | CmdFlags::FUA;
        assert_eq!(check(&s, Command::WriteZeroes, wz, 512, (1 << 20) - 512), None);
        assert_eq!(check(&s, Command::Read, none, 1 << 20, 0), None);
    }

    #[test]
    fn bad_commands_and_flags_are_einval() {
        let s = session(false, false);
        let none = CmdFlags::EMPTY;
        for cmd in [Command::Cache, Command::BlockStatus, Command::Resize, Command::Other(99)] {
            assert_eq!(check(&s, cmd, none, 0, 512), Some(Errno::Inval), "{cmd:?}");
        }
        assert_eq!(check(&s, Command::Read, CmdFlags::DF, 0, 512), Some(Errno::Inval)); // not structured
        assert_eq!(check(&s, Command::Write, CmdFlags::NO_HOLE, 0, 512), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Read, CmdFlags::REQ_ONE, 0, 512), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Trim, CmdFlags(0x100), 0, 512), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Flush, none, 0, 512), Some(Errno::Inval));
        let mut bare = s;
        bare.flags = ExportInfo::new("x", 1 << 20).flags(false);
        assert_eq!(check(&bare, Command::Write, CmdFlags::FUA, 0, 512), Some(Errno::Inval));
        assert_eq!(check(&bare, Command::Flush, none, 0, 0), Some(Errno::Inval));
        assert_eq!(check(&bare, Command::Trim, none, 0, 512), Some(Errno::Inval));
        assert_eq!(check(&bare, Command::WriteZeroes, none, 0, 512), Some(Errno::Inval));
    }

    #[test]
    fn range_alignment_and_size_errors_follow_the_specification() {
        let s = session(false, false);
        let none = CmdFlags::EMPTY;
        assert_eq!(check(&s, Command::Write, none, 1 << 20, 512), Some(Errno::NoSpc));
        assert_eq!(check(&s, Command::WriteZeroes, none, u64::MAX - 511, 512), Some(Errno::NoSpc));
        assert_eq!(check(&s, Command::Read, none, (1 << 20) - 512, 1024), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Trim, none, u64::MAX, 1), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Read, none, 100, 512), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Write, none, 0, 100), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Read, none, 0, (1 << 16) + 512), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Write, none, 0, (1 << 16) + 512), Some(Errno::Inval));
        assert_eq!(check(&s, Command::Trim, none, 0, (1 << 16) + 512), None);
    }

    #[test]
    fn read_only_exports_refuse_writes_with_eperm() {
        let s = session(true, false);
        for cmd in [Command::Write, Command::Trim, Command::WriteZeroes] {
            assert_eq!(check(&s, cmd, CmdFlags::EMPTY, 0, 512), Some(Errno::Perm), "{cmd:?}");
        }
        assert_eq!(check(&s, Command::Read, CmdFlags::EMPTY, 0, 512), None);
        assert_eq!(check(&s, Command::Flush, CmdFlags::EMPTY, 0, 0), None);
    }
}
