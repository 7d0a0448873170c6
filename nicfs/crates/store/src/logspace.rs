//! Addressing and reading a private log space (shared by front end, back end and recovery).

use nicfs_layout::{
    LOG_HEAD_OFFSET, LOG_HEADER_SIZE, LOG_TAIL_OFFSET, LogHeader, LogSpaceGeometry, LogSuper,
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
    /// Log space `index` of `space`, after checking its super block.
    pub fn open(space: &Space, index: u32) -> Result<LogSpace, FsError> {
        let g = *space.geo_ref();
        if index >= g.log_spaces {
            return Err(FsError::Invalid("log space index out of range"));
        }
        let ls = g.log_space(index);
        let mut b = [0u8; 28];
        space.pm().read(PmAddr(ls.super_block.byte_offset()), &mut b);
        LogSuper::decode(&b, &g, index)?;
        Ok(LogSpace { index, geo: ls })
    }

    /// Address of the head word.
    pub fn head_addr(&self) -> PmAddr {
        PmAddr(self.geo.super_block.byte_offset() + LOG_HEAD_OFFSET)
    }

    /// Address of the tail word.
    pub fn tail_addr(&self) -> PmAddr {
        PmAddr(self.geo.super_block.byte_offset() + LOG_TAIL_OFFSET)
    }

    /// Reads the head (first unapplied sequence number).
    pub fn head(&self, pm: &dyn Pm) -> u64 {
        pm.load_u64_atomic(self.head_addr())
    }

    /// Reads the tail (one past the last committed sequence number).
    pub fn tail(&self, pm: &dyn Pm) -> u64 {
        pm.load_u64_atomic(self.tail_addr())
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
