//! File-system errors with their POSIX errno.

use nicfs_layout::LayoutError;

/// Why a file-system operation failed.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// No such file or directory (ENOENT).
    #[error("no such file or directory")]
    NotFound,
    /// The name exists already (EEXIST).
    #[error("file exists")]
    Exists,
    /// A path component is not a directory (ENOTDIR).
    #[error("not a directory")]
    NotDir,
    /// The operation needs a non-directory (EISDIR).
    #[error("is a directory")]
    IsDir,
    /// The directory is not empty (ENOTEMPTY).
    #[error("directory not empty")]
    NotEmpty,
    /// A name is longer than 255 bytes (ENAMETOOLONG).
    #[error("file name too long")]
    NameTooLong,
    /// A bad argument (EINVAL).
    #[error("invalid argument: {0}")]
    Invalid(&'static str),
    /// Out of data blocks or inodes (ENOSPC).
    #[error("no space left on device")]
    NoSpace,
    /// Beyond the largest file size (EFBIG).
    #[error("file too large")]
    TooBig,
    /// Too many hard links (EMLINK).
    #[error("too many links")]
    TooManyLinks,
    /// Unknown file handle (EBADF).
    #[error("bad file handle")]
    BadHandle,
    /// Not permitted (EPERM), e.g. hard link to a directory.
    #[error("operation not permitted")]
    NotPermitted,
    /// An on-PM structure is corrupt (EIO); the message says where.
    #[error("corrupt file system: {0}")]
    Corrupt(String),
    /// A checksummed structure failed to parse, or a format request is unusable (EIO).
    #[error("{0}")]
    Layout(#[from] LayoutError),
    /// A transaction exceeds the journal capacity (internal; callers split batches).
    #[error("transaction of {lines} lines exceeds journal capacity {capacity}")]
    TxnTooLarge {
        /// Lines staged.
        lines: usize,
        /// Journal capacity in lines.
        capacity: usize,
    },
    /// The back end is unreachable or refused (EIO).
    #[error("back end: {0}")]
    Backend(String),
}

impl FsError {
    /// The Linux errno for this error.
    pub fn errno(&self) -> i32 {
        match self {
            FsError::NotFound => 2,
            FsError::Exists => 17,
            FsError::NotDir => 20,
            FsError::IsDir => 21,
            FsError::NotEmpty => 39,
            FsError::NameTooLong => 36,
            FsError::Invalid(_) => 22,
            FsError::NoSpace => 28,
            FsError::TooBig => 27,
            FsError::TooManyLinks => 31,
            FsError::BadHandle => 9,
            FsError::NotPermitted => 1,
            FsError::Corrupt(_) | FsError::Layout(_) | FsError::TxnTooLarge { .. } | FsError::Backend(_) => 5,
        }
    }

    /// A corruption error naming the place.
    pub fn corrupt(msg: impl Into<String>) -> FsError {
        FsError::Corrupt(msg.into())
    }
}
