//! Fixed-size messages on the comm rings.

/// What a message asks for or answers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MsgKind {
    /// Front end attaches to its slot (arg0 = pid). Reply: `Ok`.
    Hello,
    /// Request a lease (arg0 = ino, arg1 = 1 read / 2 write). Reply: `Lease`.
    LeaseReq,
    /// Grant (arg0 = table index, arg1 = expiry ns).
    Lease,
    /// Ask for up to 6 free inode numbers (arg0 = count). Reply: `Inodes`.
    AllocInodes,
    /// Granted inode numbers (arg0 = count, arg1.. = numbers).
    Inodes,
    /// Apply my log at least up to sequence arg0 (back-pressure). Reply: `Ok`.
    Drain,
    /// Front end detaches. Reply: `Ok`.
    Goodbye,
    /// Success.
    Ok,
    /// Failure (arg0 = errno).
    Err,
    /// Reserve data blocks for records about to be logged: at least arg0, up to arg1. The
    /// grant is added to the slot's quota word. Reply: `Ok` (arg0 = blocks granted), or `Err`
    /// with ENOSPC when fewer than arg0 are free and unreserved.
    Reserve,
}

impl MsgKind {
    fn code(self) -> u32 {
        self as u32 + 1
    }

    fn from_code(c: u32) -> Option<MsgKind> {
        use MsgKind::*;
        [Hello, LeaseReq, Lease, AllocInodes, Inodes, Drain, Goodbye, Ok, Err, Reserve]
            .get(c.checked_sub(1)? as usize)
            .copied()
    }
}

/// A 64-byte message: kind, request id, seven arguments.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Msg {
    /// Kind.
    pub kind: MsgKind,
    /// Request id, echoed in the reply.
    pub id: u32,
    /// Arguments.
    pub args: [u64; 7],
}

impl Msg {
    /// A message with the given kind, id and leading arguments.
    pub fn new(kind: MsgKind, id: u32, args: &[u64]) -> Msg {
        let mut a = [0u64; 7];
        a[..args.len()].copy_from_slice(args);
        Msg { kind, id, args: a }
    }

    /// Encodes into eight words.
    pub fn encode(&self) -> [u64; 8] {
        let mut w = [0u64; 8];
        w[0] = self.kind.code() as u64 | (self.id as u64) << 32;
        w[1..].copy_from_slice(&self.args);
        w
    }

    /// Decodes; `None` for an unknown kind (a corrupt or foreign region).
    pub fn decode(w: &[u64; 8]) -> Option<Msg> {
        let kind = MsgKind::from_code(w[0] as u32)?;
        let mut args = [0u64; 7];
        args.copy_from_slice(&w[1..]);
        Some(Msg { kind, id: (w[0] >> 32) as u32, args })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let m = Msg::new(MsgKind::LeaseReq, 7, &[42, 2]);
        assert_eq!(Msg::decode(&m.encode()), Some(m));
        let r = Msg::new(MsgKind::Reserve, 8, &[3, 256]);
        assert_eq!(Msg::decode(&r.encode()), Some(r));
        assert_eq!(Msg::decode(&[0; 8]), None);
        assert_eq!(Msg::decode(&[99; 8]), None);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_words_never_panic(w in proptest::array::uniform8(proptest::num::u64::ANY)) {
            if let Some(m) = Msg::decode(&w) {
                proptest::prop_assert_eq!(Msg::decode(&m.encode()), Some(m));
            }
        }
    }
}
