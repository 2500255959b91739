//! SCTP chunk walking over packet bytes: `SctpPacket` view and `ChunkView` iteration (RFC 9260 3).
//!
//! In the style of smoltcp `wire`: `SctpPacket<T: AsRef<[u8]>>` is a view over a buffer,
//! `SctpPacket::chunks` walks the chunks without allocating, and `ChunkView::parse` decodes one
//! chunk into the typed `Chunk` of `chunk.rs`. Nothing here panics or loops on malformed input.
//!
//! Length conventions of the parsed types: `DataChunk::payload_len`, `CookieEcho::cookie_len` and
//! `Pad::len` come from the chunk Length field (announced, not captured); `InitParam::StateCookie`
//! and `InitParam::Padding` `len` are the bytes after the 4-byte parameter header; the `len` of
//! `InitParam::{Auth, Other}`, `AsconfParam::Other`, `ErrorCause` and `ReconfigParam` is the
//! parameter Length field as on the wire (header included, padding excluded).

use std::borrow::Cow;

use super::chunk::{
    chunk_type_name, types, AsconfChunk, Chunk, DataChunk, ErrorCause, InitChunk, ReconfigParam,
    SackChunk,
};
use super::error::{ChunkError, ChunkErrorKind, WireError};
use super::param::{
    address, asconf_param, be16, be32, init_param, ptypes, reconfig_param, TlvIter,
};

/// Length of the SCTP common header (RFC 9260 3.1).
pub const COMMON_HEADER_LEN: usize = 12;
/// Length of a chunk header: type, flags, length (RFC 9260 3.2).
pub const CHUNK_HEADER_LEN: usize = 4;

/// A view of an SCTP packet (common header + chunks) over a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SctpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SctpPacket<T> {
    /// Wraps a buffer without checking its length: the header accessors panic below 12 bytes.
    pub const fn new_unchecked(buffer: T) -> Self {
        SctpPacket { buffer }
    }

    /// Wraps a buffer holding at least the 12-byte common header (RFC 9260 3.1).
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let len = buffer.as_ref().len();
        if len < COMMON_HEADER_LEN {
            return Err(WireError::TooShort(len));
        }
        Ok(SctpPacket { buffer })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn be16(&self, at: usize) -> u16 {
        be16(self.buffer.as_ref(), at)
    }

    pub fn src_port(&self) -> u16 {
        self.be16(0)
    }

    pub fn dst_port(&self) -> u16 {
        self.be16(2)
    }

    pub fn verification_tag(&self) -> u32 {
        be32(self.buffer.as_ref(), 4)
    }

    /// The checksum field read big-endian, as tshark displays it. The CRC32c itself is stored
    /// little-endian (see `crc32c`); use `verify_checksum` to check it.
    pub fn checksum(&self) -> u32 {
        be32(self.buffer.as_ref(), 8)
    }

    /// CRC32c check of the whole packet (RFC 9260 6.8); false for a packet cut by the capture.
    pub fn verify_checksum(&self) -> bool {
        super::crc32c::verify(self.buffer.as_ref())
    }

    /// The bytes after the common header (the chunks), empty if the buffer is too short.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(COMMON_HEADER_LEN..).unwrap_or(&[])
    }

    /// Walks the chunks. `missing` is how many bytes of this packet the capture cut off (snap
    /// length), 0 for a fully captured packet.
    pub fn chunks(&self, missing: usize) -> ChunkIter<'_> {
        ChunkIter::new(self.buffer.as_ref(), missing)
    }
}

impl<'a> SctpPacket<&'a [u8]> {
    /// Like `chunks`, but the views borrow the underlying bytes rather than this packet view.
    pub fn into_chunks(self, missing: usize) -> ChunkIter<'a> {
        ChunkIter::new(self.buffer, missing)
    }
}

/// One chunk as found in the packet: header fields and its (captured) value bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkView<'a> {
    pub ctype: u8,
    pub flags: u8,
    /// The chunk Length field (header included, padding excluded).
    pub length: u16,
    /// The captured bytes after the 4-byte chunk header, at most `length - 4`.
    pub value: &'a [u8],
    /// Offset of the chunk inside the SCTP packet.
    pub offset: usize,
    /// The capture cut this chunk: `value` is shorter than `length - 4`.
    pub truncated: bool,
}

/// Iterator over the chunks of an SCTP packet; see `SctpPacket::chunks`. Fused: after an error
/// or a truncated chunk it returns `None`.
#[derive(Debug, Clone)]
pub struct ChunkIter<'a> {
    packet: &'a [u8],
    pos: usize,
    missing: usize,
    done: bool,
}

impl<'a> ChunkIter<'a> {
    /// Walks the chunks of `packet` (common header included; a shorter packet has no chunks).
    pub fn new(packet: &'a [u8], missing: usize) -> Self {
        ChunkIter {
            packet,
            pos: COMMON_HEADER_LEN.min(packet.len()),
            missing,
            done: false,
        }
    }

    fn fail(&mut self, kind: ChunkErrorKind) -> Option<Result<ChunkView<'a>, ChunkError>> {
        self.done = true;
        Some(Err(ChunkError {
            offset: self.pos,
            kind,
        }))
    }
}

impl<'a> Iterator for ChunkIter<'a> {
    type Item = Result<ChunkView<'a>, ChunkError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = &self.packet[self.pos..];
        if rest.is_empty() {
            self.done = true;
            return None;
        }
        if rest.len() < CHUNK_HEADER_LEN {
            if self.missing > 0 {
                // The capture cut the chunk header itself: nothing to report.
                self.done = true;
                return None;
            }
            return self.fail(ChunkErrorKind::TrailingBytes(rest.len()));
        }
        let (ctype, flags, length) = (rest[0], rest[1], be16(rest, 2));
        let len = usize::from(length);
        // RFC 9260 3.2: the Length field counts the 4-byte header, so it is at least 4.
        if len < CHUNK_HEADER_LEN {
            return self.fail(ChunkErrorKind::LengthTooSmall(length));
        }
        let offset = self.pos;
        let truncated = len > rest.len();
        if truncated {
            // A chunk cut by the snap length is still reported, as far as captured, and ends the
            // walk; unless its length goes past the original packet end too.
            let available = rest.len().saturating_add(self.missing);
            if self.missing == 0 || len > available {
                return self.fail(ChunkErrorKind::PastEnd { length, available });
            }
            self.done = true;
        } else {
            // RFC 9260 3.2: chunks are padded to a multiple of 4 bytes, padding not in Length.
            // A missing final padding is tolerated.
            self.pos = (self.pos + ((len + 3) & !3)).min(self.packet.len());
        }
        Some(Ok(ChunkView {
            ctype,
            flags,
            length,
            value: &rest[CHUNK_HEADER_LEN..len.min(rest.len())],
            offset,
            truncated,
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            (0, Some((self.packet.len() - self.pos).div_ceil(4)))
        }
    }
}

impl std::iter::FusedIterator for ChunkIter<'_> {}

/// Takes up to `n` bytes off the front of `rest`, rounded down to whole 4-byte entries.
fn take4<'a>(rest: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(rest.len()) & !3;
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    head
}

impl<'a> ChunkView<'a> {
    /// RFC name of the chunk type ("DATA", "UNKNOWN-99", ...).
    pub fn type_name(&self) -> Cow<'static, str> {
        chunk_type_name(self.ctype)
    }

    /// Decodes the chunk. A truncated chunk is decoded as far as captured: it succeeds when its
    /// fixed fields are present (variable parts hold what was captured), else it is an error.
    /// A DATA chunk, most chunks, is decoded in the caller (the call and the match over every
    /// type cost more than decoding one); any other in `parse_any`.
    #[inline(always)]
    pub fn parse(&self) -> Result<Chunk<'a>, ChunkError> {
        if self.ctype == types::DATA {
            if let Ok(d) = self.data() {
                return Ok(Chunk::Data(d));
            }
        }
        self.parse_any()
    }

    #[inline(never)]
    fn parse_any(&self) -> Result<Chunk<'a>, ChunkError> {
        use types::*;
        // Every arm makes the whole result, each error with the chunk's offset: building the
        // chunk first and wrapping it afterwards copied it (a quarter of the cost of decoding).
        let err = |kind| ChunkError {
            offset: self.offset,
            kind,
        };
        // The fixed fields after the chunk header, `need` bytes at least.
        let fixed = |need| self.fixed(need).map_err(err);
        // SACK, the most common chunk after DATA, is told apart before the match's jump.
        if self.ctype == SACK {
            return self.sack().map(Chunk::Sack).map_err(err);
        }
        let t_bit = self.flags & 0x01 != 0;
        match self.ctype {
            DATA | I_DATA => self.data().map(Chunk::Data).map_err(err),
            INIT | INIT_ACK => self.init().map(Chunk::Init).map_err(err),
            SACK | NR_SACK => self.sack().map(Chunk::Sack).map_err(err),
            // RFC 9260 3.3.5/3.3.6: the Heartbeat Info parameter, kept as raw bytes.
            HEARTBEAT | HEARTBEAT_ACK => Ok(Chunk::Heartbeat {
                ack: self.ctype == HEARTBEAT_ACK,
                info: self.value,
            }),
            // RFC 9260 3.3.7: T bit is flag 0x01; then zero or more error causes.
            ABORT => self
                .causes()
                .map(|causes| Chunk::Abort { t_bit, causes })
                .map_err(err),
            // RFC 9260 3.3.10: one or more error causes.
            ERROR => self
                .causes()
                .map(|causes| Chunk::Error { causes })
                .map_err(err),
            // RFC 9260 3.3.8: Cumulative TSN Ack, length 8.
            SHUTDOWN => fixed(4).map(|v| Chunk::Shutdown {
                cum_tsn_ack: be32(v, 0),
            }),
            // RFC 9260 3.3.9 / 3.3.12: header only.
            SHUTDOWN_ACK => Ok(Chunk::ShutdownAck),
            COOKIE_ACK => Ok(Chunk::CookieAck),
            // RFC 9260 3.3.13: T bit is flag 0x01.
            SHUTDOWN_COMPLETE => Ok(Chunk::ShutdownComplete { t_bit }),
            // RFC 9260 3.3.11: the cookie is the whole value.
            COOKIE_ECHO => Ok(Chunk::CookieEcho {
                cookie_len: self.announced(),
            }),
            // RFC 9260 Appendix A: ECNE and CWR carry the lowest TSN (u32).
            ECNE => fixed(4).map(|v| Chunk::Ecne {
                lowest_tsn: be32(v, 0),
            }),
            CWR => fixed(4).map(|v| Chunk::Cwr {
                lowest_tsn: be32(v, 0),
            }),
            // RFC 4895 4.1: Shared Key Identifier u16, HMAC Identifier u16, then the HMAC.
            AUTH => fixed(4).map(|v| Chunk::Auth {
                key_id: be16(v, 0),
                hmac_id: be16(v, 2),
            }),
            ASCONF | ASCONF_ACK => self.asconf().map(Chunk::Asconf).map_err(err),
            RE_CONFIG => self
                .reconfig()
                .map(|params| Chunk::Reconfig { params })
                .map_err(err),
            // RFC 4820 3: the value is padding.
            PAD => Ok(Chunk::Pad {
                len: self.announced(),
            }),
            // RFC 3758 3.2 / RFC 8260 2.3: New Cumulative TSN, then per-stream entries.
            FORWARD_TSN | I_FORWARD_TSN => fixed(4).map(|v| Chunk::ForwardTsn {
                i_forward: self.ctype == I_FORWARD_TSN,
                new_cum_tsn: be32(v, 0),
            }),
            ctype => Ok(Chunk::Unknown { ctype }),
        }
    }

    /// The value if it holds at least `need` bytes (the fixed fields after the chunk header).
    fn fixed(&self, need: usize) -> Result<&'a [u8], ChunkErrorKind> {
        if self.value.len() < need {
            return Err(ChunkErrorKind::ValueTooShort {
                ctype: self.ctype,
                need: need + CHUNK_HEADER_LEN,
                have: self.value.len() + CHUNK_HEADER_LEN,
            });
        }
        Ok(self.value)
    }

    /// Announced value length (Length field minus the chunk header).
    fn announced(&self) -> usize {
        usize::from(self.length).saturating_sub(CHUNK_HEADER_LEN)
    }

    fn params(&self, from: usize) -> TlvIter<'a> {
        let bytes = self.value.get(from..).unwrap_or(&[]);
        TlvIter::new(bytes, CHUNK_HEADER_LEN + from, self.truncated)
    }

    /// RFC 6525 3.1: one or two re-configuration parameters.
    fn reconfig(&self) -> Result<Vec<ReconfigParam>, ChunkErrorKind> {
        let mut params = Vec::new();
        for t in self.params(0) {
            match reconfig_param(&t?)? {
                Some(p) => params.push(p),
                None => break,
            }
        }
        Ok(params)
    }

    #[inline(always)]
    fn data(&self) -> Result<DataChunk, ChunkErrorKind> {
        let idata = self.ctype == types::I_DATA;
        // RFC 9260 3.3.1: TSN, Stream Identifier, Stream Sequence Number, PPID (16-byte header).
        // RFC 8260 2.1: TSN, Stream Identifier, Reserved, MID, PPID/FSN (20-byte header).
        let (fixed, ssn_or_mid, ppid_at) = if idata {
            let v = self.fixed(16)?;
            (16, be32(v, 8), 12)
        } else {
            let v = self.fixed(12)?;
            (12, u32::from(be16(v, 6)), 8)
        };
        let v = self.value;
        // A DATA chunk with no user data (length 16) is a protocol violation (RFC 9260 3.3.1)
        // but is still decoded, with payload_len 0, for the analysis to report.
        Ok(DataChunk {
            idata,
            tsn: be32(v, 0),
            stream_id: be16(v, 4),
            ssn_or_mid,
            ppid_or_fsn: be32(v, ppid_at),
            payload_len: self.announced().saturating_sub(fixed) as u32,
            // RFC 7053 (DATA) and RFC 8260 2.1 (I-DATA): flags I=0x08, U=0x04, B=0x02, E=0x01.
            flag_i: self.flags & 0x08 != 0,
            flag_u: self.flags & 0x04 != 0,
            flag_b: self.flags & 0x02 != 0,
            flag_e: self.flags & 0x01 != 0,
        })
    }

    fn init(&self) -> Result<InitChunk, ChunkErrorKind> {
        // RFC 9260 3.3.2/3.3.3: Initiate Tag, a_rwnd, OS, MIS, Initial TSN (20-byte chunk),
        // then optional/variable-length parameters.
        let v = self.fixed(16)?;
        let mut params = Vec::new();
        for t in self.params(16) {
            match init_param(&t?)? {
                Some(p) => params.push(p),
                None => break,
            }
        }
        Ok(InitChunk {
            ack: self.ctype == types::INIT_ACK,
            initiate_tag: be32(v, 0),
            a_rwnd: be32(v, 4),
            outbound_streams: be16(v, 8),
            inbound_streams: be16(v, 10),
            initial_tsn: be32(v, 12),
            params,
        })
    }

    fn sack(&self) -> Result<SackChunk<'a>, ChunkErrorKind> {
        let nr = self.ctype == types::NR_SACK;
        // RFC 9260 3.3.4: Cumulative TSN Ack, a_rwnd, # gap blocks, # dup TSNs (16-byte chunk).
        // NR-SACK: Cumulative TSN Ack, a_rwnd, # gap, # NR gap, # dup, reserved (20 bytes).
        let head = if nr { 16 } else { 12 };
        let v = self.fixed(head)?;
        let n_gap_blocks = be16(v, 8);
        let (n_nr_gap_blocks, n_dup_tsns) = if nr {
            (be16(v, 10), be16(v, 12))
        } else {
            (0, be16(v, 10))
        };
        let gaps = 4 * usize::from(n_gap_blocks);
        let nr_gaps = 4 * usize::from(n_nr_gap_blocks);
        let dups = 4 * usize::from(n_dup_tsns);
        let need = head + gaps + nr_gaps + dups;
        // RFC 9260 3.3.4: the blocks and TSNs announced must fit in the chunk length.
        if self.announced() < need {
            return Err(ChunkErrorKind::ValueTooShort {
                ctype: self.ctype,
                need: need + CHUNK_HEADER_LEN,
                have: usize::from(self.length),
            });
        }
        // Gap blocks (4 bytes each), then NR gap blocks, then duplicate TSNs; clipped to what was
        // captured in whole entries.
        let mut rest = &v[head..];
        let gap_bytes = take4(&mut rest, gaps);
        let nr_gap_bytes = take4(&mut rest, nr_gaps);
        let dup_bytes = take4(&mut rest, dups);
        Ok(SackChunk {
            nr,
            cum_tsn_ack: be32(v, 0),
            a_rwnd: be32(v, 4),
            n_gap_blocks,
            n_nr_gap_blocks,
            n_dup_tsns,
            gap_bytes,
            nr_gap_bytes,
            dup_bytes,
        })
    }

    fn causes(&self) -> Result<Vec<ErrorCause>, ChunkErrorKind> {
        // RFC 9260 3.3.10: causes are TLVs (code, length), padded to 4 bytes; a cut cause whose
        // header was captured is still listed.
        let mut causes = Vec::new();
        for t in self.params(0) {
            let t = t?;
            causes.push(ErrorCause {
                code: t.ptype,
                len: t.len,
            });
        }
        Ok(causes)
    }

    fn asconf(&self) -> Result<AsconfChunk, ChunkErrorKind> {
        let ack = self.ctype == types::ASCONF_ACK;
        // RFC 5061 3.1.1/3.1.2: Serial Number, then (ASCONF only) the Address Parameter, then
        // the ASCONF parameters.
        let v = self.fixed(4)?;
        let mut sender = None;
        let mut params = Vec::new();
        for (i, t) in self.params(4).enumerate() {
            let t = t?;
            if i == 0 && !ack && matches!(t.ptype, ptypes::IPV4 | ptypes::IPV6) {
                match address(&t)? {
                    Some(a) => sender = Some(a),
                    None => break,
                }
                continue;
            }
            match asconf_param(&t)? {
                Some(p) => params.push(p),
                None => break,
            }
        }
        Ok(AsconfChunk {
            ack,
            serial: be32(v, 0),
            address: sender,
            params,
        })
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
