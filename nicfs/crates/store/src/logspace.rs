//! Addressing and reading a private log space (shared by front end, back end and recovery).

use nicfs_layout::{
    LOG_HEAD_COPY_OFFSET, LOG_HEAD_OFFSET, LOG_HEADER_SIZE, LOG_TAIL_OFFSET, LayoutError, LogHeader,
    LogSpaceGeometry, LogSuper, LogWord,
};
use nicfs_pm::{Pm, PmAddr};

use crate::{FsError, Space};

/// One private log space: a log super block (head, tail), header slots and a circular data
/// region addressed by monotonic byte positions.
#[derive(Copy, Clone, Debug)]
pub struct LogSpace {
    /// Index of the space.
    pub index: u32,
    /// Its placement.
    pub geo: LogSpaceGeometry,
}

impl LogSpace {
    /// Log space `index` of `space`, after checking its super block: the static part, the
    /// head word and its copy (equal), and the tail word.
    pub fn open(space: &Space, index: u32) -> Result<LogSpace, FsError> {
        let g = *space.geo_ref();
        if index >= g.log_spaces {
            return Err(FsError::Invalid("log space index out of range"));
        }
        let ls = LogSpace { index, geo: g.log_space(index) };
        let mut b = [0u8; 28];
        space.pm().read(PmAddr(ls.geo.super_block.byte_offset()), &mut b);
        LogSuper::decode(&b, &g, index)?;
        let pm = space.pm().as_ref();
        let (head, copy) = ls.checked_head(pm);
        let (head, copy) = (head?, copy?);
        if head != copy {
            return Err(FsError::corrupt(format!("log {index}: head {head} and its copy {copy} differ")));
        }
        ls.checked_tail(pm)?;
        Ok(ls)
    }

    /// Address of the head word; its copy follows it in the same cache line.
    pub fn head_addr(&self) -> PmAddr {
        PmAddr(self.geo.super_block.byte_offset() + LOG_HEAD_OFFSET)
    }

    /// Address of the tail word.
    pub fn tail_addr(&self) -> PmAddr {
        PmAddr(self.geo.super_block.byte_offset() + LOG_TAIL_OFFSET)
    }

    /// Reads the head (first unapplied sequence number). The word's check is not verified
    /// here: [`LogSpace::open`] did, and only the back end writes it since.
    pub fn head(&self, pm: &dyn Pm) -> u64 {
        LogWord::seq(pm.load_u64_atomic(self.head_addr()))
    }

    /// Reads the tail (one past the last committed sequence number), unchecked as
    /// [`LogSpace::head`].
    pub fn tail(&self, pm: &dyn Pm) -> u64 {
        LogWord::seq(pm.load_u64_atomic(self.tail_addr()))
    }

    /// Reads and checks the head word and its copy.
    pub fn checked_head(&self, pm: &dyn Pm) -> (Result<u64, LayoutError>, Result<u64, LayoutError>) {
        let base = self.geo.super_block.byte_offset();
        let word = |off| LogWord::Head.decode(self.index, pm.load_u64_atomic(PmAddr(base + off)));
        (word(LOG_HEAD_OFFSET), word(LOG_HEAD_COPY_OFFSET))
    }

    /// Reads and checks the tail word.
    pub fn checked_tail(&self, pm: &dyn Pm) -> Result<u64, LayoutError> {
        LogWord::Tail.decode(self.index, pm.load_u64_atomic(self.tail_addr()))
    }

    /// The bytes of the head word and its copy, holding `seq`: written together, at
    /// [`LogSpace::head_addr`], by the journal commit of the batch that ends at `seq`.
    pub fn head_words(&self, seq: u64) -> [u8; 16] {
        let w = LogWord::Head.encode(self.index, seq).to_le_bytes();
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&w);
        b[8..].copy_from_slice(&w);
        b
    }

    /// The tail word holding `seq`, stored with one atomic 8-byte store at
    /// [`LogSpace::tail_addr`].
    pub fn tail_word(&self, seq: u64) -> u64 {
        LogWord::Tail.encode(self.index, seq)
    }

    /// Address of the header slot of `seq`.
    pub fn header_addr(&self, seq: u64) -> PmAddr {
        PmAddr(
            self.geo.headers_start.byte_offset() + (seq % self.geo.headers as u64) * LOG_HEADER_SIZE as u64,
        )
    }

    /// Address of monotonic data position `pos`.
    pub fn data_addr(&self, pos: u64) -> PmAddr {
        PmAddr(self.geo.data_start.byte_offset() + pos % self.geo.data_bytes)
    }

    /// Reads and checks the header of `seq`: checksum, matching sequence number, geometry
    /// limits, and a payload that does not wrap around the data region.
    pub fn read_header(&self, pm: &dyn Pm, space: &Space, seq: u64) -> Result<LogHeader, FsError> {
        let mut b = [0u8; LOG_HEADER_SIZE];
        pm.read(self.header_addr(seq), &mut b);
        let h = LogHeader::decode(&b)
            .map_err(|e| FsError::corrupt(format!("log {} seq {seq}: {e}", self.index)))?;
        if h.seq != seq {
            return Err(FsError::corrupt(format!(
                "log {} slot of seq {seq} holds seq {}",
                self.index, h.seq
            )));
        }
        h.validate(space.geo_ref())
            .map_err(|e| FsError::corrupt(format!("log {} seq {seq}: {e}", self.index)))?;
        if h.data_pos % self.geo.data_bytes + h.data_len as u64 > self.geo.data_bytes {
            return Err(FsError::corrupt(format!("log {} seq {seq}: payload wraps", self.index)));
        }
        Ok(h)
    }

    /// Reads a header's payload and checks its CRC.
    pub fn read_payload(&self, pm: &dyn Pm, h: &LogHeader) -> Result<Vec<u8>, FsError> {
        let mut data = vec![0u8; h.data_len as usize];
        pm.read(self.data_addr(h.data_pos), &mut data);
        let crc = nicfs_layout::crc32(&data);
        if crc != h.data_crc {
            return Err(FsError::corrupt(format!(
                "log {} seq {}: payload checksum mismatch",
                self.index, h.seq
            )));
        }
        Ok(data)
    }
}
