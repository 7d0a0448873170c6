//! Parse and validation errors for on-PM structures.

/// An on-PM structure or a format request that cannot be trusted or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// A magic number does not match: the bytes are not this structure.
    #[error("{what}: bad magic {found:#x}")]
    BadMagic {
        /// Which structure.
        what: &'static str,
        /// The value found.
        found: u64,
    },
    /// A checksum does not match: the structure is torn or corrupt.
    #[error("{what}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    BadChecksum {
        /// Which structure.
        what: &'static str,
        /// Stored checksum.
        stored: u32,
        /// Checksum of the bytes.
        computed: u32,
    },
    /// A field holds a value outside its valid range.
    #[error("{what}: field `{field}` out of range ({value})")]
    OutOfRange {
        /// Which structure.
        what: &'static str,
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// The input is shorter than the structure.
    #[error("{what}: need {need} bytes, got {got}")]
    Truncated {
        /// Which structure.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        got: usize,
    },
    /// The image was made in another on-PM format than the one this build reads.
    #[error(
        "the image is in NICFS format {found}, this build reads format {supported} only (format 3 added checks to the log head and tail words and a copy of the head; format 2 directory-entry checksums and the block reservation of write records); copy the files off with the build that made it, then mkfs"
    )]
    Version {
        /// The image's format.
        found: u32,
        /// The format this build reads.
        supported: u32,
    },
    /// A format configuration field is unusable.
    #[error("format config: `{field}` {reason}")]
    BadConfig {
        /// The field.
        field: &'static str,
        /// Why.
        reason: String,
    },
}
