//! An in-memory reference file system: the oracle of the crash checker.

use std::collections::BTreeMap;

use nicfs_layout::{BLOCK_SIZE, FileType, ROOT_INO};
use nicfs_pm::PmAddr;
use nicfs_store::{FsError, MetaRead, Space, bmap, dir_entries, read_inode};

/// A node of the reference tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A directory.
    Dir,
    /// A regular file and its bytes.
    File(Vec<u8>),
}

/// The whole tree: absolute path -> node (the root is implicit).
pub type Tree = BTreeMap<String, Node>;

/// One operation of a generated sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Create an empty file.
    Create(String),
    /// Write bytes at an offset.
    Write(String, u64, Vec<u8>),
    /// Set the size.
    Truncate(String, u64),
    /// Remove a file.
    Unlink(String),
    /// Create a directory.
    Mkdir(String),
    /// Remove an empty directory.
    Rmdir(String),
    /// Rename (replacing a file or empty directory of the same kind).
    Rename(String, String),
}

fn parent(p: &str) -> &str {
    match p.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &p[..i],
    }
}

fn exists_dir(t: &Tree, p: &str) -> bool {
    p == "/" || t.get(p) == Some(&Node::Dir)
}

fn children<'a>(t: &'a Tree, dir: &'a str) -> impl Iterator<Item = &'a String> + 'a {
    t.keys().filter(move |k| parent(k) == dir)
}

/// Applies `op` to the model if it is valid there; returns whether it was.
pub fn apply(t: &mut Tree, op: &Op) -> bool {
    match op {
        Op::Create(p) | Op::Mkdir(p) => {
            if t.contains_key(p) || !exists_dir(t, parent(p)) {
                return false;
            }
            t.insert(p.clone(), if matches!(op, Op::Mkdir(_)) { Node::Dir } else { Node::File(Vec::new()) });
        }
        Op::Write(p, off, data) => {
            let Some(Node::File(v)) = t.get_mut(p) else { return false };
            let end = *off as usize + data.len();
            if v.len() < end {
                v.resize(end, 0);
            }
            v[*off as usize..end].copy_from_slice(data);
        }
        Op::Truncate(p, size) => {
            let Some(Node::File(v)) = t.get_mut(p) else { return false };
            v.resize(*size as usize, 0);
        }
        Op::Unlink(p) => {
            if !matches!(t.get(p), Some(Node::File(_))) {
                return false;
            }
            t.remove(p);
        }
        Op::Rmdir(p) => {
            if t.get(p) != Some(&Node::Dir) || children(t, p).next().is_some() {
                return false;
            }
            t.remove(p);
        }
        Op::Rename(a, b) => {
            let Some(src) = t.get(a).cloned() else { return false };
            if !exists_dir(t, parent(b)) || b.starts_with(&format!("{a}/")) || a == b {
                return false;
            }
            match (t.get(b), &src) {
                (None, _) => {}
                (Some(Node::File(_)), Node::File(_)) => {}
                (Some(Node::Dir), Node::Dir) if children(t, b).next().is_none() => {}
                _ => return false,
            }
            let moved: Vec<(String, Node)> = t
                .iter()
                .filter(|(k, _)| k.starts_with(&format!("{a}/")))
                .map(|(k, v)| (format!("{b}{}", &k[a.len()..]), v.clone()))
                .collect();
            t.retain(|k, _| k != a && !k.starts_with(&format!("{a}/")));
            t.insert(b.clone(), src);
            t.extend(moved);
        }
    }
    true
}

/// Reads the whole tree out of the public space (after recovery has applied every log).
pub fn read_tree(space: &Space) -> Result<Tree, FsError> {
    let mut out = Tree::new();
    let mut stack = vec![(ROOT_INO, String::new())];
    let mut seen = 0u32;
    while let Some((dir, path)) = stack.pop() {
        let di = read_inode(space, dir)?;
        for (_, d) in dir_entries(space, &di)? {
            seen += 1;
            if seen > space.geo().inode_count * 4 {
                return Err(FsError::corrupt("directory graph loops"));
            }
            let name = String::from_utf8_lossy(&d.name).into_owned();
            let p = format!("{path}/{name}");
            let ino = read_inode(space, d.ino)?;
            if d.ftype == FileType::Directory {
                out.insert(p.clone(), Node::Dir);
                stack.push((d.ino, p));
            } else {
                if ino.size > space.pm().len() {
                    return Err(FsError::corrupt(format!("{} larger than the file system", d.ino)));
                }
                let mut data = vec![0u8; ino.size as usize];
                for (fb, chunk) in data.chunks_mut(BLOCK_SIZE as usize).enumerate() {
                    if let Some(b) = bmap(space, &ino, fb as u64)? {
                        space.pm().read(PmAddr(b.byte_offset()), chunk);
                    }
                }
                out.insert(p, Node::File(data));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_semantics() {
        let mut t = Tree::new();
        assert!(apply(&mut t, &Op::Mkdir("/d".into())));
        assert!(apply(&mut t, &Op::Create("/d/x".into())));
        assert!(apply(&mut t, &Op::Write("/d/x".into(), 3, b"ab".to_vec())));
        assert_eq!(t["/d/x"], Node::File(vec![0, 0, 0, b'a', b'b']));
        assert!(!apply(&mut t, &Op::Rmdir("/d".into())));
        assert!(apply(&mut t, &Op::Rename("/d".into(), "/e".into())));
        assert!(t.contains_key("/e/x"));
        assert!(!apply(&mut t, &Op::Rename("/e".into(), "/e/y".into())));
        assert!(apply(&mut t, &Op::Truncate("/e/x".into(), 1)));
        assert_eq!(t["/e/x"], Node::File(vec![0]));
    }
}
