//! Serde for option values that have a fio spelling: they serialize as that string (so a
//! report's config echo reads like the job file) and deserialize by parsing it.

/// Implements `Serialize` via `Display` and `Deserialize` via `FromStr` for `$t`.
macro_rules! fio_string_serde {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use fio_string_serde;
