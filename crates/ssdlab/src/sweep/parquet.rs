//! The results table as Apache Parquet: a minimal writer for a flat table (one row group, one
//! uncompressed PLAIN data page per column, every column OPTIONAL), which pandas (pyarrow),
//! polars and DuckDB read.
//!
//! ```text
//!   "PAR1" | per column: PageHeader + definition levels + values | FileMetaData | len | "PAR1"
//! ```
//!
//! Headers and metadata are Thrift structures in the compact protocol (the format's own
//! encoding, written here field by field). A column's definition levels (1: a value, 0:
//! missing) are run-length encoded at bit width 1; its values follow in PLAIN encoding: INT64
//! and DOUBLE little-endian, BYTE_ARRAY as a 4-byte length and UTF-8 bytes, BOOLEAN one bit
//! each. A table of a few hundred runs is a few hundred kilobytes, so compression and
//! dictionaries are left out.

use super::table::{ColumnData, Table};

/// Thrift compact-protocol type codes.
mod ct {
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const STRUCT: u8 = 12;
}

/// A Thrift compact-protocol writer. Field ids are written as deltas from the previous field
/// of the same struct, so structs are tracked on a stack.
struct Compact {
    out: Vec<u8>,
    last: Vec<i16>,
}

impl Compact {
    fn new() -> Compact {
        Compact { out: Vec::new(), last: vec![0] }
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    fn field(&mut self, id: i16, ty: u8) {
        let last = self.last.last_mut().expect("inside a struct");
        let delta = id - *last;
        *last = id;
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | ty);
        } else {
            self.out.push(ty);
            self.zigzag(i64::from(id));
        }
    }

    fn i32(&mut self, id: i16, v: i32) {
        self.field(id, ct::I32);
        self.zigzag(i64::from(v));
    }

    fn i64(&mut self, id: i16, v: i64) {
        self.field(id, ct::I64);
        self.zigzag(v);
    }

    fn binary(&mut self, id: i16, bytes: &[u8]) {
        self.field(id, ct::BINARY);
        self.bytes(bytes);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.varint(bytes.len() as u64);
        self.out.extend_from_slice(bytes);
    }

    fn list(&mut self, id: i16, elem: u8, len: usize) {
        self.field(id, ct::LIST);
        if len < 15 {
            self.out.push(((len as u8) << 4) | elem);
        } else {
            self.out.push(0xf0 | elem);
            self.varint(len as u64);
        }
    }

    /// Opens a struct-valued field (`Some(id)`) or a struct element of a list (`None`).
    fn open(&mut self, id: Option<i16>) {
        if let Some(id) = id {
            self.field(id, ct::STRUCT);
        }
        self.last.push(0);
    }

    /// Ends the innermost struct.
    fn close(&mut self) {
        self.out.push(0);
        self.last.pop();
    }
}

/// Physical type, converted type and the PLAIN values of a column.
fn plain(data: &ColumnData) -> (i32, Option<i32>, Vec<u8>) {
    let mut v = Vec::new();
    match data {
        ColumnData::Int(xs) => {
            xs.iter().flatten().for_each(|x| v.extend_from_slice(&x.to_le_bytes()));
            (2, None, v)
        }
        ColumnData::Real(xs) => {
            xs.iter().flatten().for_each(|x| v.extend_from_slice(&x.to_le_bytes()));
            (5, None, v)
        }
        ColumnData::Text(xs) => {
            for s in xs.iter().flatten() {
                v.extend_from_slice(&(s.len() as u32).to_le_bytes());
                v.extend_from_slice(s.as_bytes());
            }
            (6, Some(0), v)
        }
        ColumnData::Bool(xs) => {
            let bits: Vec<bool> = xs.iter().flatten().copied().collect();
            v = vec![0u8; bits.len().div_ceil(8)];
            for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
                v[i / 8] |= 1 << (i % 8);
            }
            (0, None, v)
        }
    }
}

/// Whether each row has a value.
fn present(data: &ColumnData) -> Vec<bool> {
    match data {
        ColumnData::Int(xs) => xs.iter().map(Option::is_some).collect(),
        ColumnData::Real(xs) => xs.iter().map(Option::is_some).collect(),
        ColumnData::Text(xs) => xs.iter().map(Option::is_some).collect(),
        ColumnData::Bool(xs) => xs.iter().map(Option::is_some).collect(),
    }
}

/// Definition levels in the RLE/bit-packing hybrid at bit width 1, as RLE runs, with the
/// 4-byte length prefix of a version-1 data page.
fn levels(present: &[bool]) -> Vec<u8> {
    let mut c = Compact::new();
    let mut i = 0;
    while i < present.len() {
        let run = present[i..].iter().take_while(|&&p| p == present[i]).count();
        c.varint((run as u64) << 1);
        c.out.push(u8::from(present[i]));
        i += run;
    }
    let mut out = (c.out.len() as u32).to_le_bytes().to_vec();
    out.extend(c.out);
    out
}

/// Where a column chunk went.
struct Chunk {
    physical: i32,
    converted: Option<i32>,
    offset: i64,
    size: i64,
}

/// The table as a Parquet file.
pub fn to_parquet(t: &Table) -> Vec<u8> {
    let rows = t.rows();
    let mut file = b"PAR1".to_vec();
    let mut chunks = Vec::new();
    for c in &t.columns {
        let (physical, converted, values) = plain(&c.data);
        let mut body = levels(&present(&c.data));
        body.extend(values);
        let mut h = Compact::new();
        h.i32(1, 0); // DATA_PAGE
        h.i32(2, body.len() as i32);
        h.i32(3, body.len() as i32);
        h.open(Some(5));
        h.i32(1, rows as i32);
        h.i32(2, 0); // PLAIN
        h.i32(3, 3); // RLE definition levels
        h.i32(4, 3); // RLE repetition levels (none: the table is flat)
        h.close();
        h.close();
        let offset = file.len() as i64;
        file.extend(&h.out);
        file.extend(&body);
        chunks.push(Chunk { physical, converted, offset, size: (h.out.len() + body.len()) as i64 });
    }

    let mut m = Compact::new();
    m.i32(1, 1);
    m.list(2, ct::STRUCT, t.columns.len() + 1);
    m.open(None);
    m.binary(4, b"schema");
    m.i32(5, t.columns.len() as i32);
    m.close();
    for (c, k) in t.columns.iter().zip(&chunks) {
        m.open(None);
        m.i32(1, k.physical);
        m.i32(3, 1); // OPTIONAL
        m.binary(4, c.name.as_bytes());
        if let Some(conv) = k.converted {
            m.i32(6, conv); // UTF8
            m.open(Some(10));
            m.open(Some(1)); // LogicalType::STRING
            m.close();
            m.close();
        }
        m.close();
    }
    m.i64(3, rows as i64);
    m.list(4, ct::STRUCT, 1);
    m.open(None);
    m.list(1, ct::STRUCT, chunks.len());
    for (c, k) in t.columns.iter().zip(&chunks) {
        m.open(None);
        m.i64(2, k.offset);
        m.open(Some(3));
        m.i32(1, k.physical);
        m.list(2, ct::I32, 2);
        m.zigzag(0); // PLAIN
        m.zigzag(3); // RLE
        m.list(3, ct::BINARY, 1);
        m.bytes(c.name.as_bytes());
        m.i32(4, 0); // UNCOMPRESSED
        m.i64(5, rows as i64);
        m.i64(6, k.size);
        m.i64(7, k.size);
        m.i64(9, k.offset);
        m.close();
        m.close();
    }
    m.i64(2, chunks.iter().map(|k| k.size).sum());
    m.i64(3, rows as i64);
    m.close();
    m.binary(6, format!("ssdlab version {}", env!("CARGO_PKG_VERSION")).as_bytes());
    m.close();
    file.extend(&m.out);
    file.extend((m.out.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    file
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::table::Column;

    #[test]
    fn compact_protocol_bytes() {
        let mut c = Compact::new();
        c.i32(1, -3); // delta 1, i32: zigzag(-3) = 5
        c.i64(20, 300); // delta 19: long form, id zigzag 40, zigzag(300) = 600 = 0xd8 0x04
        c.list(2, ct::I32, 16); // delta from 20 negative: long form; 16 elements: long list header
        c.close();
        assert_eq!(c.out, [0x15, 0x05, 0x06, 0x28, 0xd8, 0x04, 0x09, 0x04, 0xf5, 0x10, 0x00]);
    }

    #[test]
    fn definition_levels_are_runs() {
        assert_eq!(levels(&[true, true, true, false, true]), [6, 0, 0, 0, 6, 1, 2, 0, 2, 1]);
        assert_eq!(levels(&[]), [0, 0, 0, 0]);
    }

    #[test]
    fn the_file_is_framed_and_its_footer_is_where_its_length_says() {
        let t = Table {
            columns: vec![
                Column { name: "run".into(), data: ColumnData::Int(vec![Some(0), Some(1)]) },
                Column { name: "waf".into(), data: ColumnData::Real(vec![Some(1.5), None]) },
                Column { name: "ok".into(), data: ColumnData::Bool(vec![Some(true), Some(false)]) },
                Column { name: "status".into(), data: ColumnData::Text(vec![Some("ok".into()), None]) },
            ],
            ..Table::default()
        };
        let f = to_parquet(&t);
        assert_eq!(&f[..4], b"PAR1");
        assert_eq!(&f[f.len() - 4..], b"PAR1");
        let len = u32::from_le_bytes(f[f.len() - 8..f.len() - 4].try_into().unwrap()) as usize;
        let footer = &f[f.len() - 8 - len..f.len() - 8];
        assert_eq!(footer[..2], [0x15, 0x02], "FileMetaData starts with version 1");
        assert_eq!(*footer.last().unwrap(), 0, "and ends with a stop byte");
        let names = ["run", "waf", "ok", "status", "schema"];
        for name in names {
            assert!(footer.windows(name.len()).any(|w| w == name.as_bytes()), "{name} in the schema");
        }
        // The first page's levels: one run of two present values (length 2: 04 01).
        assert!(f[4..].windows(6).any(|w| w == [2, 0, 0, 0, 4, 1]));
    }
}
