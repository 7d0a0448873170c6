//! Every magic number and code of the NBD wire protocol, as `doc/proto.md` of the
//! NetworkBlockDevice/nbd project defines it (section by section; all values big-endian on the
//! wire). Nothing else in the crate spells a protocol number.

// ---- Magic numbers ------------------------------------------------------------------------

/// `NBDMAGIC` (ASCII "NBDMAGIC", the `INIT_PASSWD`): first 64 bits of the server greeting.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT` (ASCII "IHAVEOPT"): second 64 bits of the newstyle greeting, and the first 64 bits
/// of every option the client sends.
pub const IHAVEOPT: u64 = 0x4948_4156_454F_5054;
/// Magic of every fixed-newstyle option reply (`0x3e889045565a9`).
pub const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// `NBD_REQUEST_MAGIC`: first 32 bits of every transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// `NBD_SIMPLE_REPLY_MAGIC` (formerly `NBD_REPLY_MAGIC`).
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// `NBD_STRUCTURED_REPLY_MAGIC`: first 32 bits of every structured reply chunk.
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

// ---- Handshake flags (16 bits, server -> client) --------------------------------------------

/// `NBD_FLAG_FIXED_NEWSTYLE` (bit 0).
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
/// `NBD_FLAG_NO_ZEROES` (bit 1).
pub const FLAG_NO_ZEROES: u16 = 1 << 1;

// ---- Client flags (32 bits, client -> server) ----------------------------------------------

/// `NBD_FLAG_C_FIXED_NEWSTYLE` (bit 0).
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
/// `NBD_FLAG_C_NO_ZEROES` (bit 1).
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

// ---- Transmission flags (16 bits) -----------------------------------------------------------

/// `NBD_FLAG_HAS_FLAGS` (bit 0): always set.
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
/// `NBD_FLAG_READ_ONLY` (bit 1).
pub const FLAG_READ_ONLY: u16 = 1 << 1;
/// `NBD_FLAG_SEND_FLUSH` (bit 2).
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
/// `NBD_FLAG_SEND_FUA` (bit 3).
pub const FLAG_SEND_FUA: u16 = 1 << 3;
/// `NBD_FLAG_ROTATIONAL` (bit 4).
pub const FLAG_ROTATIONAL: u16 = 1 << 4;
/// `NBD_FLAG_SEND_TRIM` (bit 5).
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
/// `NBD_FLAG_SEND_WRITE_ZEROES` (bit 6).
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
/// `NBD_FLAG_SEND_DF` (bit 7): only with structured replies.
pub const FLAG_SEND_DF: u16 = 1 << 7;
/// `NBD_FLAG_CAN_MULTI_CONN` (bit 8).
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;
/// `NBD_FLAG_SEND_RESIZE` (bit 9; experimental, never sent by this server).
pub const FLAG_SEND_RESIZE: u16 = 1 << 9;
/// `NBD_FLAG_SEND_CACHE` (bit 10; never sent by this server).
pub const FLAG_SEND_CACHE: u16 = 1 << 10;
/// `NBD_FLAG_SEND_FAST_ZERO` (bit 11).
pub const FLAG_SEND_FAST_ZERO: u16 = 1 << 11;

// ---- Option types ---------------------------------------------------------------------------

/// `NBD_OPT_EXPORT_NAME`.
pub const OPT_EXPORT_NAME: u32 = 1;
/// `NBD_OPT_ABORT`.
pub const OPT_ABORT: u32 = 2;
/// `NBD_OPT_LIST`.
pub const OPT_LIST: u32 = 3;
/// `NBD_OPT_PEEK_EXPORT` (withdrawn).
pub const OPT_PEEK_EXPORT: u32 = 4;
/// `NBD_OPT_STARTTLS`.
pub const OPT_STARTTLS: u32 = 5;
/// `NBD_OPT_INFO`.
pub const OPT_INFO: u32 = 6;
/// `NBD_OPT_GO`.
pub const OPT_GO: u32 = 7;
/// `NBD_OPT_STRUCTURED_REPLY`.
pub const OPT_STRUCTURED_REPLY: u32 = 8;
/// `NBD_OPT_LIST_META_CONTEXT`.
pub const OPT_LIST_META_CONTEXT: u32 = 9;
/// `NBD_OPT_SET_META_CONTEXT`.
pub const OPT_SET_META_CONTEXT: u32 = 10;

// ---- Option reply types ---------------------------------------------------------------------

/// `NBD_REP_ACK`.
pub const REP_ACK: u32 = 1;
/// `NBD_REP_SERVER`.
pub const REP_SERVER: u32 = 2;
/// `NBD_REP_INFO`.
pub const REP_INFO: u32 = 3;
/// `NBD_REP_META_CONTEXT`.
pub const REP_META_CONTEXT: u32 = 4;
/// Bit 31 marks every option error reply.
pub const REP_FLAG_ERROR: u32 = 1 << 31;
/// `NBD_REP_ERR_UNSUP` (2^31 + 1).
pub const REP_ERR_UNSUP: u32 = REP_FLAG_ERROR + 1;
/// `NBD_REP_ERR_POLICY` (2^31 + 2).
pub const REP_ERR_POLICY: u32 = REP_FLAG_ERROR + 2;
/// `NBD_REP_ERR_INVALID` (2^31 + 3).
pub const REP_ERR_INVALID: u32 = REP_FLAG_ERROR + 3;
/// `NBD_REP_ERR_PLATFORM` (2^31 + 4).
pub const REP_ERR_PLATFORM: u32 = REP_FLAG_ERROR + 4;
/// `NBD_REP_ERR_TLS_REQD` (2^31 + 5).
pub const REP_ERR_TLS_REQD: u32 = REP_FLAG_ERROR + 5;
/// `NBD_REP_ERR_UNKNOWN` (2^31 + 6).
pub const REP_ERR_UNKNOWN: u32 = REP_FLAG_ERROR + 6;
/// `NBD_REP_ERR_SHUTDOWN` (2^31 + 7).
pub const REP_ERR_SHUTDOWN: u32 = REP_FLAG_ERROR + 7;
/// `NBD_REP_ERR_BLOCK_SIZE_REQD` (2^31 + 8).
pub const REP_ERR_BLOCK_SIZE_REQD: u32 = REP_FLAG_ERROR + 8;
/// `NBD_REP_ERR_TOO_BIG` (2^31 + 9).
pub const REP_ERR_TOO_BIG: u32 = REP_FLAG_ERROR + 9;

// ---- Information types (NBD_REP_INFO payloads, NBD_OPT_INFO/GO requests) -------------------

/// `NBD_INFO_EXPORT`.
pub const INFO_EXPORT: u16 = 0;
/// `NBD_INFO_NAME`.
pub const INFO_NAME: u16 = 1;
/// `NBD_INFO_DESCRIPTION`.
pub const INFO_DESCRIPTION: u16 = 2;
/// `NBD_INFO_BLOCK_SIZE`.
pub const INFO_BLOCK_SIZE: u16 = 3;

// ---- Request types --------------------------------------------------------------------------

/// `NBD_CMD_READ`.
pub const CMD_READ: u16 = 0;
/// `NBD_CMD_WRITE`.
pub const CMD_WRITE: u16 = 1;
/// `NBD_CMD_DISC`.
pub const CMD_DISC: u16 = 2;
/// `NBD_CMD_FLUSH`.
pub const CMD_FLUSH: u16 = 3;
/// `NBD_CMD_TRIM`.
pub const CMD_TRIM: u16 = 4;
/// `NBD_CMD_CACHE`.
pub const CMD_CACHE: u16 = 5;
/// `NBD_CMD_WRITE_ZEROES`.
pub const CMD_WRITE_ZEROES: u16 = 6;
/// `NBD_CMD_BLOCK_STATUS`.
pub const CMD_BLOCK_STATUS: u16 = 7;
/// `NBD_CMD_RESIZE` (experimental).
pub const CMD_RESIZE: u16 = 8;

// ---- Command flags (16 bits) ----------------------------------------------------------------

/// `NBD_CMD_FLAG_FUA` (bit 0).
pub const CMD_FLAG_FUA: u16 = 1 << 0;
/// `NBD_CMD_FLAG_NO_HOLE` (bit 1): `NBD_CMD_WRITE_ZEROES` only.
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;
/// `NBD_CMD_FLAG_DF` (bit 2): `NBD_CMD_READ` only, with structured replies.
pub const CMD_FLAG_DF: u16 = 1 << 2;
/// `NBD_CMD_FLAG_REQ_ONE` (bit 3): `NBD_CMD_BLOCK_STATUS` only.
pub const CMD_FLAG_REQ_ONE: u16 = 1 << 3;
/// `NBD_CMD_FLAG_FAST_ZERO` (bit 4): `NBD_CMD_WRITE_ZEROES` only.
pub const CMD_FLAG_FAST_ZERO: u16 = 1 << 4;

// ---- Structured replies ---------------------------------------------------------------------

/// `NBD_REPLY_FLAG_DONE` (bit 0): the final chunk of a structured reply.
pub const REPLY_FLAG_DONE: u16 = 1 << 0;
/// `NBD_REPLY_TYPE_NONE`.
pub const REPLY_TYPE_NONE: u16 = 0;
/// `NBD_REPLY_TYPE_OFFSET_DATA`.
pub const REPLY_TYPE_OFFSET_DATA: u16 = 1;
/// `NBD_REPLY_TYPE_OFFSET_HOLE`.
pub const REPLY_TYPE_OFFSET_HOLE: u16 = 2;
/// `NBD_REPLY_TYPE_BLOCK_STATUS`.
pub const REPLY_TYPE_BLOCK_STATUS: u16 = 5;
/// Bit 15 marks every error chunk type.
pub const REPLY_TYPE_FLAG_ERROR: u16 = 1 << 15;
/// `NBD_REPLY_TYPE_ERROR` (2^15 + 1).
pub const REPLY_TYPE_ERROR: u16 = REPLY_TYPE_FLAG_ERROR + 1;
/// `NBD_REPLY_TYPE_ERROR_OFFSET` (2^15 + 2).
pub const REPLY_TYPE_ERROR_OFFSET: u16 = REPLY_TYPE_FLAG_ERROR + 2;

// ---- Sizes ----------------------------------------------------------------------------------

/// Server greeting: NBDMAGIC, IHAVEOPT, 16-bit handshake flags.
pub const GREETING_LEN: usize = 18;
/// Client flags: 32 bits.
pub const CLIENT_FLAGS_LEN: usize = 4;
/// Option request header: IHAVEOPT, option, length.
pub const OPTION_HEADER_LEN: usize = 16;
/// Option reply header: magic, option, reply type, length.
pub const OPTION_REPLY_HEADER_LEN: usize = 20;
/// Reply to `NBD_OPT_EXPORT_NAME` without the zero padding: size, transmission flags.
pub const EXPORT_NAME_REPLY_LEN: usize = 10;
/// The reserved zero padding after an `NBD_OPT_EXPORT_NAME` reply (unless NO_ZEROES).
pub const EXPORT_NAME_ZEROES: usize = 124;
/// Request header: magic, flags, type, cookie, offset, length.
pub const REQUEST_HEADER_LEN: usize = 28;
/// Simple reply header: magic, error, cookie.
pub const SIMPLE_REPLY_HEADER_LEN: usize = 16;
/// Structured reply chunk header: magic, flags, type, cookie, length.
pub const CHUNK_HEADER_LEN: usize = 20;
/// Longest string the protocol allows (export names, messages), in bytes.
pub const MAX_STRING_LEN: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    /// Pins each value to the literal printed in `doc/proto.md`, so an accidental edit fails.
    #[test]
    fn values_match_the_specification() {
        assert_eq!(&NBDMAGIC.to_be_bytes(), b"NBDMAGIC");
        assert_eq!(&IHAVEOPT.to_be_bytes(), b"IHAVEOPT");
        assert_eq!(OPTION_REPLY_MAGIC, 0x3e889045565a9);
        assert_eq!(REQUEST_MAGIC, 0x25609513);
        assert_eq!(SIMPLE_REPLY_MAGIC, 0x67446698);
        assert_eq!(STRUCTURED_REPLY_MAGIC, 0x668e33ef);
        let tflags = [
            FLAG_HAS_FLAGS,
            FLAG_READ_ONLY,
            FLAG_SEND_FLUSH,
            FLAG_SEND_FUA,
            FLAG_ROTATIONAL,
            FLAG_SEND_TRIM,
            FLAG_SEND_WRITE_ZEROES,
            FLAG_SEND_DF,
            FLAG_CAN_MULTI_CONN,
            FLAG_SEND_RESIZE,
            FLAG_SEND_CACHE,
            FLAG_SEND_FAST_ZERO,
        ];
        for (bit, flag) in tflags.iter().enumerate() {
            assert_eq!(*flag, 1 << bit);
        }
        assert_eq!([OPT_EXPORT_NAME, OPT_ABORT, OPT_LIST, OPT_PEEK_EXPORT, OPT_STARTTLS], [1, 2, 3, 4, 5]);
        assert_eq!([OPT_INFO, OPT_GO, OPT_STRUCTURED_REPLY], [6, 7, 8]);
        assert_eq!([OPT_LIST_META_CONTEXT, OPT_SET_META_CONTEXT], [9, 10]);
        assert_eq!([REP_ACK, REP_SERVER, REP_INFO, REP_META_CONTEXT], [1, 2, 3, 4]);
        let errs = [
            REP_ERR_UNSUP,
            REP_ERR_POLICY,
            REP_ERR_INVALID,
            REP_ERR_PLATFORM,
            REP_ERR_TLS_REQD,
            REP_ERR_UNKNOWN,
            REP_ERR_SHUTDOWN,
            REP_ERR_BLOCK_SIZE_REQD,
            REP_ERR_TOO_BIG,
        ];
        for (i, e) in errs.iter().enumerate() {
            assert_eq!(*e, 2u32.pow(31) + 1 + i as u32);
        }
        assert_eq!([INFO_EXPORT, INFO_NAME, INFO_DESCRIPTION, INFO_BLOCK_SIZE], [0, 1, 2, 3]);
        assert_eq!([CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM], [0, 1, 2, 3, 4]);
        assert_eq!([CMD_CACHE, CMD_WRITE_ZEROES, CMD_BLOCK_STATUS, CMD_RESIZE], [5, 6, 7, 8]);
        assert_eq!(
            [CMD_FLAG_FUA, CMD_FLAG_NO_HOLE, CMD_FLAG_DF, CMD_FLAG_REQ_ONE, CMD_FLAG_FAST_ZERO],
            [1, 2, 4, 8, 16]
        );
        assert_eq!(REPLY_FLAG_DONE, 1);
        assert_eq!([REPLY_TYPE_NONE, REPLY_TYPE_OFFSET_DATA, REPLY_TYPE_OFFSET_HOLE], [0, 1, 2]);
        assert_eq!(REPLY_TYPE_BLOCK_STATUS, 5);
        assert_eq!([REPLY_TYPE_ERROR, REPLY_TYPE_ERROR_OFFSET], [32769, 32770]);
    }
}
