//! TCP segment views (smoltcp style: a checked view over borrowed bytes, no allocation): the fixed
//! header (RFC 9293 3.1), flags, and the options the analyzer uses: MSS (RFC 9293 3.2), window
//! scale and timestamps (RFC 7323 2, 3), SACK-permitted and SACK blocks (RFC 2018 2, 3).

/// Flag bits of the TCP header (RFC 9293 3.1, RFC 3168 for ECE/CWR).
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// Why a segment could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentError {
    /// Fewer than the 20 bytes of the fixed header were captured.
    Short(usize),
    /// Data Offset below 5 words (RFC 9293 3.1).
    BadOffset(u8),
}

impl std::fmt::Display for SegmentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SegmentError::Short(n) => write!(f, "TCP header: {n} bytes captured, 20 needed"),
            SegmentError::BadOffset(o) => write!(f, "TCP data offset {o} words, at least 5 needed"),
        }
    }
}

/// A checked view of one TCP segment. The options and payload are cut to what was captured.
#[derive(Debug, Clone, Copy)]
pub struct TcpSegment<'a> {
    buf: &'a [u8],
    hlen: usize,
}

#[inline]
fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl<'a> TcpSegment<'a> {
    /// RFC 9293 3.1: 20 fixed bytes; Data Offset counts 32-bit words and is at least 5. A header
    /// longer than the captured bytes (snap length) keeps what is there.
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, SegmentError> {
        if buf.len() < 20 {
            return Err(SegmentError::Short(buf.len()));
        }
        let off = buf[12] >> 4;
        if off < 5 {
            return Err(SegmentError::BadOffset(off));
        }
        let hlen = usize::from(off) * 4;
        Ok(TcpSegment { buf, hlen })
    }

    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.buf, 0)
    }
    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.buf, 2)
    }
    #[inline]
    pub fn seq(&self) -> u32 {
        be32(self.buf, 4)
    }
    #[inline]
    pub fn ack(&self) -> u32 {
        be32(self.buf, 8)
    }
    #[inline]
    pub fn flags(&self) -> u8 {
        self.buf[13]
    }
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.buf[13] & f != 0
    }
    /// The raw (unscaled) window field.
    #[inline]
    pub fn window(&self) -> u16 {
        be16(self.buf, 14)
    }
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buf, 16)
    }
    /// Header length in bytes (Data Offset x 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        self.hlen
    }
    /// The option bytes that were captured.
    #[inline]
    pub fn option_bytes(&self) -> &'a [u8] {
        let end = self.hlen.min(self.buf.len());
        &self.buf[20..end]
    }
    /// The captured payload.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        self.buf.get(self.hlen..).unwrap_or(&[])
    }
    /// Payload length announced by the IP header: captured bytes plus `missing` cut by the snap
    /// length (which may also have cut part of the header).
    #[inline]
    pub fn payload_len(&self, missing: usize) -> u32 {
        (self.buf.len() + missing).saturating_sub(self.hlen) as u32
    }
    #[inline]
    pub fn options(&self) -> OptionIter<'a> {
        OptionIter {
            b: self.option_bytes(),
            pos: 0,
        }
    }
}

/// One TCP option (RFC 9293 3.2 kinds 0, 1, 2; RFC 7323 kinds 3, 8; RFC 2018 kinds 4, 5;
/// RFC 7413 kind 34).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption<'a> {
    Mss(u16),
    WindowScale(u8),
    SackPermitted,
    /// Raw SACK blocks: 8 bytes each (left edge, right edge).
    Sack(&'a [u8]),
    Timestamps {
        tsval: u32,
        tsecr: u32,
    },
    FastOpen(&'a [u8]),
    Unknown {
        kind: u8,
        data: &'a [u8],
    },
}

/// Iterates the options; stops at End of Option List or at a malformed length.
#[derive(Debug, Clone)]
pub struct OptionIter<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = TcpOption<'a>;
    fn next(&mut self) -> Option<TcpOption<'a>> {
        loop {
            let kind = *self.b.get(self.pos)?;
            match kind {
                // RFC 9293 3.2: End of Option List.
                0 => return None,
                // No-Operation: one byte, used for alignment.
                1 => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            let len = usize::from(*self.b.get(self.pos + 1)?);
            // A length below 2 or past the header would loop or overrun: stop (RFC 9293 3.2
            // asks a receiver to be prepared for illegal option lengths).
            if len < 2 || self.pos + len > self.b.len() {
                return None;
            }
            let data = &self.b[self.pos + 2..self.pos + len];
            self.pos += len;
            return Some(match (kind, data.len()) {
                (2, 2) => TcpOption::Mss(be16(data, 0)),
                (3, 1) => TcpOption::WindowScale(data[0]),
                (4, 0) => TcpOption::SackPermitted,
                (5, n) if n % 8 == 0 => TcpOption::Sack(data),
                (8, 8) => TcpOption::Timestamps {
                    tsval: be32(data, 0),
                    tsecr: be32(data, 4),
                },
                (34, _) => TcpOption::FastOpen(data),
                _ => TcpOption::Unknown { kind, data },
            });
        }
    }
}

/// RFC 2018 3: at most 4 SACK blocks fit in the 40 option bytes (3 beside timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// The options of one segment, decoded once into fixed storage (no allocation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub ts: Option<(u32, u32)>,
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    pub n_sack: u8,
    pub fast_open: bool,
}

impl Options {
    #[inline]
    pub fn parse(seg: &TcpSegment<'_>) -> Options {
        let b = seg.option_bytes();
        // The common layouts: no options, or NOP NOP Timestamps (RFC 7323 appendix A).
        if b.is_empty() {
            return Options::default();
        }
        if b.len() >= 12 && b[..4] == [1, 1, 8, 10] {
            let mut o = Options {
                ts: Some((be32(b, 4), be32(b, 8))),
                ..Options::default()
            };
            let rest = &b[12..];
            if rest.is_empty() {
                return o;
            }
            // NOP NOP SACK (RFC 2018 appendix A), the blocks filling the rest.
            if rest.len() >= 12
                && rest[..3] == [1, 1, 5]
                && usize::from(rest[3]) + 2 == rest.len()
                && (rest.len() - 4).is_multiple_of(8)
            {
                for blk in rest[4..].chunks_exact(8).take(MAX_SACK_BLOCKS) {
                    o.sack[usize::from(o.n_sack)] = (be32(blk, 0), be32(blk, 4));
                    o.n_sack += 1;
                }
                return o;
            }
        }
        Options::parse_all(seg)
    }

    fn parse_all(seg: &TcpSegment<'_>) -> Options {
        let mut o = Options::default();
        for opt in seg.options() {
            match opt {
                TcpOption::Mss(m) => o.mss = Some(m),
                // RFC 7323 2.3: a shift above 14 is used as 14.
                TcpOption::WindowScale(s) => o.wscale = Some(s.min(14)),
                TcpOption::SackPermitted => o.sack_permitted = true,
                TcpOption::Timestamps { tsval, tsecr } => o.ts = Some((tsval, tsecr)),
                TcpOption::Sack(b) => {
                    for blk in b.chunks_exact(8).take(MAX_SACK_BLOCKS) {
                        o.sack[usize::from(o.n_sack)] = (be32(blk, 0), be32(blk, 4));
                        o.n_sack += 1;
                    }
                }
                TcpOption::FastOpen(_) => o.fast_open = true,
                TcpOption::Unknown { .. } => {}
            }
        }
        o
    }

    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..usize::from(self.n_sack)]
    }
}
