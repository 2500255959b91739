//! Errors of the link and IP layers, each naming the layer and the byte offset inside the frame.

/// A frame that could not be sliced down to an IP payload.
///
/// Display: `"ipv4 header at frame offset 14: IHL 4 < 5"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{layer} header at frame offset {offset}: {kind}")]
pub struct NetError {
    /// "link", "ethernet", "vlan", "sll", "sll2", "null", "loop", "raw-ip", "ipv4", "ipv6",
    /// "ipv6-ext", "ah".
    pub layer: &'static str,
    /// Offset of the offending header inside the frame.
    pub offset: usize,
    pub kind: NetErrorKind,
}

/// What is wrong with the header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetErrorKind {
    #[error("unsupported link type {0}")]
    UnsupportedLinktype(u32),
    #[error("truncated: {need} bytes needed, {have} captured")]
    Truncated { need: usize, have: usize },
    #[error("TLV length {0} below its 4-byte header")]
    BadTlvLength(u16),
    #[error("IP version {0}")]
    BadVersion(u8),
    #[error("IHL {0} < 5")]
    IhlTooSmall(u8),
    #[error("IHL {ihl} ({len} bytes) beyond the {have} captured bytes")]
    IhlBeyondPacket { ihl: u8, len: usize, have: usize },
    #[error("total length {total} < header length {header}")]
    TotalLenTooSmall { total: u16, header: usize },
    #[error(
        "extension header (next header {next_header}) of {len} bytes beyond the payload length"
    )]
    ExtBeyondPayload { next_header: u8, len: usize },
}

impl NetError {
    pub(crate) fn new(layer: &'static str, offset: usize, kind: NetErrorKind) -> Self {
        NetError {
            layer,
            offset,
            kind,
        }
    }

    pub(crate) fn truncated(layer: &'static str, offset: usize, need: usize, have: usize) -> Self {
        Self::new(layer, offset, NetErrorKind::Truncated { need, have })
    }
}
