//! Typed SCTP chunks (RFC 9260 3.3 and extensions), parsed once from a `ChunkView`.
//!
//! Hot-path chunks (DATA, I-DATA, SACK, NR-SACK, HEARTBEAT*) borrow their variable parts so that
//! decoding allocates nothing; rare control chunks (INIT, ASCONF, ...) own small vectors.

use std::net::IpAddr;

/// Chunk type numbers (RFC 9260 3.2 and the RFCs named per constant).
pub mod types {
    pub const DATA: u8 = 0;
    pub const INIT: u8 = 1;
    pub const INIT_ACK: u8 = 2;
    pub const SACK: u8 = 3;
    pub const HEARTBEAT: u8 = 4;
    pub const HEARTBEAT_ACK: u8 = 5;
    pub const ABORT: u8 = 6;
    pub const SHUTDOWN: u8 = 7;
    pub const SHUTDOWN_ACK: u8 = 8;
    pub const ERROR: u8 = 9;
    pub const COOKIE_ECHO: u8 = 10;
    pub const COOKIE_ACK: u8 = 11;
    /// RFC 9260 Appendix A (ECN).
    pub const ECNE: u8 = 12;
    pub const CWR: u8 = 13;
    pub const SHUTDOWN_COMPLETE: u8 = 14;
    /// RFC 4895.
    pub const AUTH: u8 = 15;
    /// NR-SACK (draft-tuexen-tsvwg-sctp-multipath / FreeBSD), type 16.
    pub const NR_SACK: u8 = 16;
    /// RFC 8260.
    pub const I_DATA: u8 = 64;
    /// RFC 5061.
    pub const ASCONF_ACK: u8 = 128;
    /// RFC 6525.
    pub const RE_CONFIG: u8 = 130;
    /// RFC 4820.
    pub const PAD: u8 = 132;
    /// RFC 3758.
    pub const FORWARD_TSN: u8 = 192;
    /// RFC 5061.
    pub const ASCONF: u8 = 193;
    /// RFC 8260.
    pub const I_FORWARD_TSN: u8 = 194;
}

/// The RFC name of a chunk type in upper case with dashes; unknown types are `UNKNOWN-<n>`.
pub fn chunk_type_name(t: u8) -> std::borrow::Cow<'static, str> {
    use types::*;
    let s = match t {
        DATA => "DATA",
        INIT => "INIT",
        INIT_ACK => "INIT-ACK",
        SACK => "SACK",
        HEARTBEAT => "HEARTBEAT",
        HEARTBEAT_ACK => "HEARTBEAT-ACK",
        ABORT => "ABORT",
        SHUTDOWN => "SHUTDOWN",
        SHUTDOWN_ACK => "SHUTDOWN-ACK",
        ERROR => "ERROR",
        COOKIE_ECHO => "COOKIE-ECHO",
        COOKIE_ACK => "COOKIE-ACK",
        ECNE => "ECNE",
        CWR => "CWR",
        SHUTDOWN_COMPLETE => "SHUTDOWN-COMPLETE",
        AUTH => "AUTH",
        NR_SACK => "NR-SACK",
        I_DATA => "I-DATA",
        ASCONF_ACK => "ASCONF-ACK",
        RE_CONFIG => "RE-CONFIG",
        PAD => "PAD",
        FORWARD_TSN => "FORWARD-TSN",
        ASCONF => "ASCONF",
        I_FORWARD_TSN => "I-FORWARD-TSN",
        other => return std::borrow::Cow::Owned(format!("UNKNOWN-{other}")),
    };
    std::borrow::Cow::Borrowed(s)
}

/// DATA (RFC 9260 3.3.1) or I-DATA (RFC 8260 2.1) chunk header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataChunk {
    /// True for I-DATA.
    pub idata: bool,
    pub tsn: u32,
    pub stream_id: u16,
    /// DATA: stream sequence number (widened); I-DATA: message identifier (MID).
    pub ssn_or_mid: u32,
    /// DATA: PPID. I-DATA: PPID when B is set, otherwise the fragment sequence number (FSN).
    pub ppid_or_fsn: u32,
    /// User data length announced by the chunk length field (not what was captured).
    pub payload_len: u32,
    /// RFC 7053 I bit (SACK-IMMEDIATELY).
    pub flag_i: bool,
    pub flag_u: bool,
    pub flag_b: bool,
    pub flag_e: bool,
}

/// A gap ack block as offsets from the cumulative TSN ack (RFC 9260 3.3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GapBlock {
    pub start: u16,
    pub end: u16,
}

/// SACK (RFC 9260 3.3.4) or NR-SACK: borrowed gap blocks and duplicate TSNs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SackChunk<'a> {
    pub nr: bool,
    pub cum_tsn_ack: u32,
    pub a_rwnd: u32,
    /// Number of gap blocks announced in the header.
    pub n_gap_blocks: u16,
    /// NR-SACK only: number of non-renegable gap blocks announced.
    pub n_nr_gap_blocks: u16,
    /// Number of duplicate TSNs announced in the header.
    pub n_dup_tsns: u16,
    /// Raw bytes of the (captured) gap blocks, 4 bytes each.
    pub gap_bytes: &'a [u8],
    /// NR-SACK only: raw bytes of the non-renegable gap blocks.
    pub nr_gap_bytes: &'a [u8],
    /// Raw bytes of the (captured) duplicate TSNs, 4 bytes each.
    pub dup_bytes: &'a [u8],
}

impl<'a> SackChunk<'a> {
    /// Gap ack blocks, in wire order, as captured.
    pub fn gap_blocks(&self) -> impl Iterator<Item = GapBlock> + 'a {
        self.gap_bytes.chunks_exact(4).map(|b| GapBlock {
            start: u16::from_be_bytes([b[0], b[1]]),
            end: u16::from_be_bytes([b[2], b[3]]),
        })
    }
    /// NR gap ack blocks (NR-SACK), as captured.
    pub fn nr_gap_blocks(&self) -> impl Iterator<Item = GapBlock> + 'a {
        self.nr_gap_bytes.chunks_exact(4).map(|b| GapBlock {
            start: u16::from_be_bytes([b[0], b[1]]),
            end: u16::from_be_bytes([b[2], b[3]]),
        })
    }
    /// Duplicate TSNs, as captured.
    pub fn dup_tsns(&self) -> impl Iterator<Item = u32> + 'a {
        self.dup_bytes
            .chunks_exact(4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// A parameter of INIT / INIT-ACK (RFC 9260 3.3.2.1, 3.3.3.1) or ASCONF (RFC 5061 4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitParam {
    /// IPv4 (type 5) or IPv6 (type 6) address.
    Address(IpAddr),
    /// State cookie (type 7): its length only.
    StateCookie { len: usize },
    /// Cookie preservative (type 9), suggested lifespan increment in ms.
    CookiePreservative(u32),
    /// Host name address (type 11).
    HostName(String),
    /// Supported address types (type 12).
    SupportedAddressTypes(Vec<u16>),
    /// ECN capable (0x8000).
    EcnCapable,
    /// Forward-TSN supported (0xC000, RFC 3758).
    ForwardTsnSupported,
    /// Supported extensions (0x8008, RFC 5061): chunk types.
    SupportedExtensions(Vec<u8>),
    /// Random (0x8002), chunk list (0x8003), HMAC algorithms (0x8004) of RFC 4895: type and length.
    Auth { ptype: u16, len: usize },
    /// Adaptation layer indication (0xC006, RFC 5061).
    AdaptationLayer(u32),
    /// Padding (0x8005, RFC 4820).
    Padding { len: usize },
    /// Any other parameter: type and length.
    Other { ptype: u16, len: usize },
}

/// INIT (RFC 9260 3.3.2) or INIT-ACK (3.3.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitChunk {
    pub ack: bool,
    pub initiate_tag: u32,
    pub a_rwnd: u32,
    pub outbound_streams: u16,
    pub inbound_streams: u16,
    pub initial_tsn: u32,
    pub params: Vec<InitParam>,
}

/// An ASCONF parameter (RFC 5061 4.2), with its correlation id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AsconfParam {
    /// Add IP address (0xC001) with its address parameter.
    AddIp {
        correlation: u32,
        addr: Option<IpAddr>,
    },
    /// Delete IP address (0xC002).
    DeleteIp {
        correlation: u32,
        addr: Option<IpAddr>,
    },
    /// Set primary address (0xC004).
    SetPrimary {
        correlation: u32,
        addr: Option<IpAddr>,
    },
    /// Success indication (0xC005), in ASCONF-ACK.
    Success { correlation: u32 },
    /// Error cause indication (0x0302), in ASCONF-ACK.
    ErrorCause { correlation: u32 },
    /// Any other parameter: type and length.
    Other { ptype: u16, len: usize },
}

/// ASCONF (RFC 5061 3.1.1) or ASCONF-ACK (3.1.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsconfChunk {
    pub ack: bool,
    pub serial: u32,
    /// ASCONF only: the address parameter that identifies the sender.
    pub address: Option<IpAddr>,
    pub params: Vec<AsconfParam>,
}

/// An error cause (RFC 9260 3.3.10) inside ABORT or ERROR: its code and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCause {
    pub code: u16,
    pub len: u16,
}

/// A RE-CONFIG parameter (RFC 6525 4): type, request sequence number where it has one, length,
/// and the fields the stream analysis reads (each `None` / 0 where the type has no such field or
/// it was not captured).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconfigParam {
    pub ptype: u16,
    /// Re-configuration Request Sequence Number (4.1-4.3, 4.5, 4.6) or, in a Re-configuration
    /// Response (4.4), the Response Sequence Number (the request it answers).
    pub req_seq: Option<u32>,
    pub len: u16,
    /// Outgoing SSN Reset Request (4.1): the Re-configuration Response Sequence Number (the
    /// Incoming SSN Reset Request it answers, if it is sent in answer to one).
    pub resp_seq: Option<u32>,
    /// Re-configuration Response (4.4): the Result.
    pub result: Option<u32>,
    /// Add Outgoing / Incoming Streams Request (4.5, 4.6): the Number of New Streams.
    pub new_streams: Option<u16>,
    /// Outgoing / Incoming SSN Reset Request (4.1, 4.2): stream numbers listed (0: all streams).
    pub stream_count: u16,
}

/// A typed chunk. `Truncated` wraps nothing: a chunk cut by the snap length is still parsed as far
/// as captured and `ChunkView::truncated` tells; this enum only carries what was present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk<'a> {
    Data(DataChunk),
    Init(InitChunk),
    Sack(SackChunk<'a>),
    /// HEARTBEAT (RFC 9260 3.3.5) or HEARTBEAT-ACK (3.3.6): the heartbeat info bytes, as captured.
    Heartbeat {
        ack: bool,
        info: &'a [u8],
    },
    /// ABORT (3.3.7) with its T bit, or ERROR (3.3.10): error causes.
    Abort {
        t_bit: bool,
        causes: Vec<ErrorCause>,
    },
    Error {
        causes: Vec<ErrorCause>,
    },
    /// SHUTDOWN (3.3.8): cumulative TSN ack.
    Shutdown {
        cum_tsn_ack: u32,
    },
    ShutdownAck,
    /// SHUTDOWN-COMPLETE (3.3.13) with its T bit.
    ShutdownComplete {
        t_bit: bool,
    },
    /// COOKIE-ECHO (3.3.11): cookie length.
    CookieEcho {
        cookie_len: usize,
    },
    CookieAck,
    /// ECNE (Appendix A): lowest TSN.
    Ecne {
        lowest_tsn: u32,
    },
    /// CWR (Appendix A): lowest TSN.
    Cwr {
        lowest_tsn: u32,
    },
    /// AUTH (RFC 4895 4.1): shared key id and HMAC id.
    Auth {
        key_id: u16,
        hmac_id: u16,
    },
    Asconf(AsconfChunk),
    /// RE-CONFIG (RFC 6525 3.1): its parameters.
    Reconfig {
        params: Vec<ReconfigParam>,
    },
    /// PAD (RFC 4820): padding length.
    Pad {
        len: usize,
    },
    /// FORWARD-TSN (RFC 3758 3.2) or I-FORWARD-TSN (RFC 8260 2.3): new cumulative TSN.
    ForwardTsn {
        i_forward: bool,
        new_cum_tsn: u32,
    },
    /// Any other chunk type: kept with its number.
    Unknown {
        ctype: u8,
    },
}
