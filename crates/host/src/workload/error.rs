//! [`JobError`]: an option or a job that cannot be used, on one line naming the option.

/// An option ssdlab does not accept, a value that does not parse, or a job that cannot run on
/// the device. Displays on one line naming the option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// An option ssdlab does not know or support, rejected by name.
    #[error("unsupported option '{0}'")]
    Unsupported(String),
    /// A fio option ssdlab knows but deliberately does not implement, or a value of it.
    #[error("unsupported option '{option}': {reason}")]
    NotImplemented {
        /// The option as written.
        option: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// An option that needs a value was given without one.
    #[error("option '{0}' needs a value")]
    MissingValue(String),
    /// A value that does not parse or is out of range.
    #[error("option '{option}': invalid value '{value}': {expected}")]
    BadValue {
        /// The option as written.
        option: String,
        /// The value as written.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// A job whose options do not fit together or do not fit the device.
    #[error("job '{job}': {option}: {message}")]
    Invalid {
        /// The job's name.
        job: String,
        /// The option at fault.
        option: &'static str,
        /// What is wrong.
        message: String,
    },
}
