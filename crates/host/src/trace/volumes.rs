//! [`Volumes`]: small volume numbers for formats that name their volumes (blkparse devices,
//! fio iolog files), given in order of first appearance.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

use super::error::BadLine;

/// The most distinct devices (blkparse) or files (fio iolog) a trace may name. It bounds the
/// reader's memory on hostile input; real traces name a handful.
pub const MAX_VOLUMES: usize = 1 << 16;

/// Volume numbers from 0, in order of first appearance of each name.
#[derive(Debug)]
pub(crate) struct Volumes<K> {
    ids: HashMap<K, u32>,
}

impl<K: Hash + Eq> Default for Volumes<K> {
    fn default() -> Self {
        Volumes { ids: HashMap::new() }
    }
}

impl<K: Hash + Eq> Volumes<K> {
    /// The number of `name`, giving it the next one if it is new; [`BadLine::TooManyVolumes`]
    /// past [`MAX_VOLUMES`] names.
    pub(crate) fn id<Q>(&mut self, name: &Q) -> Result<u32, BadLine>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        if self.ids.len() >= MAX_VOLUMES {
            return Err(BadLine::TooManyVolumes(MAX_VOLUMES));
        }
        let id = self.ids.len() as u32;
        self.ids.insert(name.to_owned(), id);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_appearance_order_and_a_bound() {
        let mut v: Volumes<Vec<u8>> = Volumes::default();
        assert_eq!(v.id(&b"/dev/b"[..]), Ok(0));
        assert_eq!(v.id(&b"/dev/a"[..]), Ok(1));
        assert_eq!(v.id(&b"/dev/b"[..]), Ok(0));
        let mut d: Volumes<(u32, u32)> = Volumes::default();
        for i in 0..MAX_VOLUMES as u32 {
            assert_eq!(d.id(&(8, i)), Ok(i));
        }
        assert_eq!(d.id(&(9, 0)), Err(BadLine::TooManyVolumes(MAX_VOLUMES)));
        assert_eq!(d.id(&(8, 7)), Ok(7), "known names still resolve");
    }
}
