//! Columnar collection of per-chunk rows (the `chunks` DataFrame), appended in the packet loop.

use std::net::IpAddr;

use crate::packet::PacketCtx;
use crate::sctp::{Chunk, ChunkView};

/// One column vector per field of the `chunks` table; rows are appended in capture order.
#[derive(Debug, Default, Clone)]
pub struct ChunkRows {
    pub frame: Vec<u64>,
    pub ts_ns: Vec<i64>,
    pub assoc: Vec<u32>,
    pub sender: Vec<u8>,
    pub src: Vec<IpAddr>,
    pub dst: Vec<IpAddr>,
    pub ctype: Vec<u8>,
    pub flags: Vec<u8>,
    pub length: Vec<u16>,
    pub truncated: Vec<bool>,
    pub checksum_ok: Vec<Option<bool>>,
    pub tsn: Vec<Option<u32>>,
    pub stream: Vec<Option<u16>>,
    pub ssn_mid: Vec<Option<u32>>,
    pub ppid: Vec<Option<u32>>,
    pub payload_len: Vec<Option<u32>>,
    pub cum_tsn_ack: Vec<Option<u32>>,
    pub a_rwnd: Vec<Option<u32>>,
    pub gap_blocks: Vec<Option<u16>>,
    pub dup_tsns: Vec<Option<u16>>,
}

impl ChunkRows {
    pub fn len(&self) -> usize {
        self.frame.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frame.is_empty()
    }

    /// Appends one chunk of a packet sent by endpoint `sender` of association `assoc`.
    pub fn push(
        &mut self,
        ctx: &PacketCtx,
        assoc: u32,
        sender: u8,
        view: &ChunkView<'_>,
        chunk: Option<&Chunk<'_>>,
    ) {
        self.frame.push(ctx.frame);
        self.ts_ns.push(ctx.ts_ns);
        self.assoc.push(assoc);
        self.sender.push(sender);
        self.src.push(ctx.src);
        self.dst.push(ctx.dst);
        self.ctype.push(view.ctype);
        self.flags.push(view.flags);
        self.length.push(view.length);
        self.truncated.push(view.truncated);
        self.checksum_ok.push(ctx.checksum_ok);
        let (mut tsn, mut stream, mut ssn, mut ppid, mut plen) = (None, None, None, None, None);
        let (mut cum, mut rwnd, mut gaps, mut dups) = (None, None, None, None);
        match chunk {
            Some(Chunk::Data(d)) => {
                tsn = Some(d.tsn);
                stream = Some(d.stream_id);
                ssn = Some(d.ssn_or_mid);
                // I-DATA: the field is the PPID only on the first fragment (RFC 8260 2.1).
                ppid = (!d.idata || d.flag_b).then_some(d.ppid_or_fsn);
                plen = Some(d.payload_len);
            }
            Some(Chunk::Sack(s)) => {
                cum = Some(s.cum_tsn_ack);
                rwnd = Some(s.a_rwnd);
                gaps = Some(s.n_gap_blocks);
                dups = Some(s.n_dup_tsns);
            }
            Some(Chunk::Shutdown { cum_tsn_ack }) => cum = Some(*cum_tsn_ack),
            Some(Chunk::ForwardTsn { new_cum_tsn, .. }) => cum = Some(*new_cum_tsn),
            _ => {}
        }
        self.tsn.push(tsn);
        self.stream.push(stream);
        self.ssn_mid.push(ssn);
        self.ppid.push(ppid);
        self.payload_len.push(plen);
        self.cum_tsn_ack.push(cum);
        self.a_rwnd.push(rwnd);
        self.gap_blocks.push(gaps);
        self.dup_tsns.push(dups);
    }
}
