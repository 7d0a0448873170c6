//! What can go wrong while writing figures. Causes are [`std::error::Error::source`]s, not
//! part of the message (print the chain, e.g. with `anyhow`'s `{:#}`).

use std::path::PathBuf;

/// Why a figure could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The embedded font could not be registered with the plotting library (a broken build).
    #[error("the embedded font could not be loaded")]
    Font,
    /// The plotting library failed while drawing a figure.
    #[error("drawing {figure}: {message}")]
    Draw {
        /// The figure's file name (without extension).
        figure: String,
        /// The library's message.
        message: String,
    },
    /// A file could not be written.
    #[error("writing {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A PNG could not be encoded.
    #[error("encoding {}", path.display())]
    Png {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: png::EncodingError,
    },
}
