//! pcapng (draft-ietf-opsawg-pcapng): generic block framing, packet blocks parsed in place (no
//! allocation per frame) and interface state (link type, timestamp resolution and offset).

use pcap_parser::pcapng::InterfaceDescriptionBlock;

/// pcapng 4.1: Section Header Block type (palindromic: the same in both byte orders).
pub(crate) const SHB: u32 = 0x0A0D_0D0A;
/// pcapng 4.2: Interface Description Block.
pub(crate) const IDB: u32 = 0x0000_0001;
/// pcapng Appendix A (obsolete): Packet Block.
pub(crate) const OPB: u32 = 0x0000_0002;
/// pcapng 4.4: Simple Packet Block.
pub(crate) const SPB: u32 = 0x0000_0003;
/// pcapng 4.3: Enhanced Packet Block.
pub(crate) const EPB: u32 = 0x0000_0006;
/// pcapng 4.1: byte-order magic of the SHB.
pub(crate) const BOM: u32 = 0x1A2B_3C4D;
/// Blocks that carry nothing we need, skipped without a warning (pcapng 4.5 NRB, 4.6 ISB,
/// 4.7 DSB, 5.2 custom blocks, 10.1 systemd journal, Apple's process information block).
const KNOWN_SKIPPED: [u32; 7] = [
    0x0000_0004,
    0x0000_0005,
    0x0000_0009,
    0x0000_000A,
    0x0000_0BAD,
    0x4000_0BAD,
    0x8000_0001,
];
/// Blocks larger than this are taken as corruption (bounds the reader's buffer growth).
pub(crate) const MAX_BLOCK_LEN: usize = 16 * 1024 * 1024;
/// Minimum SHB length (pcapng 4.1: 28 bytes without options).
pub(crate) const SHB_MIN_LEN: usize = 28;

/// Reads a u32 in the section's byte order.
pub(crate) fn u32_at(data: &[u8], i: usize, big_endian: bool) -> Option<u32> {
    let b: [u8; 4] = data.get(i..i + 4)?.try_into().ok()?;
    Some(if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    })
}

fn u16_at(data: &[u8], i: usize, big_endian: bool) -> Option<u16> {
    let b: [u8; 2] = data.get(i..i + 2)?.try_into().ok()?;
    Some(if big_endian {
        u16::from_be_bytes(b)
    } else {
        u16::from_le_bytes(b)
    })
}

/// The generic header of a block (pcapng 3.1: type, total length, body, total length again).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockHead {
    pub btype: u32,
    pub len: usize,
    /// Byte order of the block: the current section's, or for an SHB the order it declares.
    pub big_endian: bool,
}

/// Outcome of looking at the start of a block.
#[derive(Debug)]
pub(crate) enum Head {
    Block(BlockHead),
    /// Fewer bytes than the 12 needed to read type, length and (for an SHB) byte-order magic.
    Short,
    Invalid(String),
}

/// Reads and checks a block header; `big_endian` is the current section's byte order.
pub(crate) fn block_head(data: &[u8], big_endian: bool) -> Head {
    if data.len() < 12 {
        return Head::Short;
    }
    // The SHB type is a palindrome: it reads the same in either byte order.
    let btype = u32_at(data, 0, big_endian).unwrap_or(0);
    let mut be = big_endian;
    if btype == SHB {
        // pcapng 4.1: a new section declares its own byte order with the byte-order magic.
        be = match u32_at(data, 8, false) {
            Some(BOM) => false,
            Some(m) if m.swap_bytes() == BOM => true,
            Some(m) => return Head::Invalid(format!("SHB byte-order magic 0x{m:08x} invalid")),
            None => return Head::Short,
        };
    }
    let len = u32_at(data, 4, be).unwrap_or(0) as usize;
    // pcapng 3.1: the total length includes the 12 framing bytes and is a multiple of 4.
    if len < 12 || !len.is_multiple_of(4) {
        return Head::Invalid(format!(
            "block type 0x{btype:08x} has invalid length {len} (must be >= 12 and a multiple of 4)"
        ));
    }
    if btype == SHB && len < SHB_MIN_LEN {
        return Head::Invalid(format!("SHB length {len} < {SHB_MIN_LEN}"));
    }
    if len > MAX_BLOCK_LEN {
        return Head::Invalid(format!(
            "block type 0x{btype:08x} length {len} exceeds the {MAX_BLOCK_LEN}-byte limit"
        ));
    }
    Head::Block(BlockHead {
        btype,
        len,
        big_endian: be,
    })
}

/// Checks the trailing copy of the block length (pcapng 3.1); `block` is the whole block.
pub(crate) fn trailer_ok(block: &[u8], head: &BlockHead) -> Result<(), String> {
    let trailing = u32_at(block, head.len - 4, head.big_endian).unwrap_or(0) as usize;
    if trailing != head.len {
        Err(format!(
            "block length mismatch: block type 0x{:08x} starts with length {} but ends with {trailing}",
            head.btype, head.len
        ))
    } else {
        Ok(())
    }
}

/// True for packet blocks (EPB, SPB, obsolete PB).
pub(crate) fn is_packet(btype: u32) -> bool {
    matches!(btype, EPB | SPB | OPB)
}

/// True for block types that are skipped silently.
pub(crate) fn is_known_skipped(btype: u32) -> bool {
    KNOWN_SKIPPED.contains(&btype)
}

/// A packet block parsed in place.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PacketRef {
    /// Interface id (always 0 for an SPB, pcapng 4.4).
    pub if_id: u32,
    /// Raw timestamp in interface units; None for an SPB (it has none).
    pub ts: Option<u64>,
    /// Captured bytes start at this offset inside the block.
    pub data_off: usize,
    pub caplen: usize,
    pub orig_len: u32,
}

/// Parses an EPB / SPB / OPB (`block` is the whole block, framing already checked).
pub(crate) fn packet(block: &[u8], head: &BlockHead) -> Result<PacketRef, String> {
    let be = head.big_endian;
    let body_end = head.len - 4;
    match head.btype {
        // pcapng 4.3: if_id(4) ts_high(4) ts_low(4) caplen(4) origlen(4) data options.
        // Appendix A: obsolete PB: if_id(2) drops(2) ts_high ts_low caplen origlen data options.
        EPB | OPB => {
            let name = if head.btype == EPB {
                "EPB"
            } else {
                "packet block"
            };
            if head.len < 32 {
                return Err(format!("{name} length {} < 32", head.len));
            }
            let if_id = if head.btype == EPB {
                u32_at(block, 8, be)
            } else {
                u16_at(block, 8, be).map(u32::from)
            };
            let field = |i| u32_at(block, i, be).unwrap_or(0);
            let ts = (u64::from(field(12)) << 32) | u64::from(field(16));
            let caplen = field(20) as usize;
            if 28 + caplen > body_end {
                return Err(format!(
                    "{name} captured length {caplen} exceeds its block ({} bytes)",
                    head.len
                ));
            }
            Ok(PacketRef {
                if_id: if_id.unwrap_or(0),
                ts: Some(ts),
                data_off: 28,
                caplen,
                orig_len: field(24),
            })
        }
        // pcapng 4.4: origlen(4) data; captured length = min(origlen, snaplen, room in block).
        SPB => {
            if head.len < 16 {
                return Err(format!("SPB length {} < 16", head.len));
            }
            let orig_len = u32_at(block, 8, be).unwrap_or(0);
            let room = body_end - 12;
            Ok(PacketRef {
                if_id: 0,
                ts: None,
                data_off: 12,
                caplen: (orig_len as usize).min(room),
                orig_len,
            })
        }
        t => Err(format!("block type 0x{t:08x} is not a packet block")),
    }
}

/// One interface of the current section (pcapng 4.2).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Iface {
    pub linktype: u32,
    /// 0 = no limit.
    pub snaplen: u32,
    /// Timestamp units per second (if_tsresol).
    pub units_per_s: u128,
    /// 1e9 / units_per_s when that is exact (fast path), else 0.
    ns_per_unit: u64,
    /// if_tsoffset in seconds.
    pub offset_s: i64,
}

impl Iface {
    /// Builds the interface from a parsed IDB. The options are read here, in the section's byte
    /// order, because pcap-parser 0.17 gets `if_tsresol` (power of 2) and `if_tsoffset`
    /// (big-endian) wrong. Returns warnings about unusable option values.
    pub fn from_idb(
        idb: &InterfaceDescriptionBlock<'_>,
        big_endian: bool,
    ) -> (Iface, Option<String>) {
        let mut tsresol: u8 = 6;
        let mut offset_s = 0i64;
        let mut warning = None;
        for opt in &idb.options {
            let Ok(v) = opt.as_bytes() else { continue };
            match opt.code.0 {
                // pcapng 4.2 if_tsresol (code 9, 1 byte).
                9 if !v.is_empty() => tsresol = v[0],
                // pcapng 4.2 if_tsoffset (code 14, 8-byte signed seconds).
                14 if v.len() >= 8 => {
                    let b: [u8; 8] = v[..8].try_into().unwrap_or([0; 8]);
                    offset_s = if big_endian {
                        i64::from_be_bytes(b)
                    } else {
                        i64::from_le_bytes(b)
                    };
                }
                _ => {}
            }
        }
        let units_per_s = match units_per_second(tsresol) {
            Some(u) => u,
            None => {
                warning = Some(format!(
                    "if_tsresol 0x{tsresol:02x} is out of range; using microseconds"
                ));
                1_000_000
            }
        };
        (
            Iface::new(
                u32::from(idb.linktype.0 as u16),
                idb.snaplen,
                units_per_s,
                offset_s,
            ),
            warning,
        )
    }

    pub fn new(linktype: u32, snaplen: u32, units_per_s: u128, offset_s: i64) -> Iface {
        let ns_per_unit = if units_per_s > 0 && 1_000_000_000 % units_per_s == 0 {
            (1_000_000_000 / units_per_s) as u64
        } else {
            0
        };
        Iface {
            linktype,
            snaplen,
            units_per_s,
            ns_per_unit,
            offset_s,
        }
    }

    /// Timestamp in ns since the epoch (saturating at the i64 range).
    pub fn ts_ns(&self, ts: u64) -> i64 {
        let ns: i128 = if self.ns_per_unit != 0 {
            i128::from(ts) * i128::from(self.ns_per_unit)
        } else {
            // u64 * 1e9 < 2^94: no overflow in u128; truncates toward zero like Wireshark.
            (u128::from(ts) * 1_000_000_000 / self.units_per_s) as i128
        };
        let ns = ns + i128::from(self.offset_s) * 1_000_000_000;
        ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}

/// pcapng 4.2 if_tsresol: MSB set = negative power of 2 of the remaining bits, else negative
/// power of 10; default 6 (µs). Returns None where units per second would not fit in u128.
pub(crate) fn units_per_second(tsresol: u8) -> Option<u128> {
    let e = u32::from(tsresol & 0x7F);
    if tsresol & 0x80 != 0 {
        // e <= 127: 2^e fits in u128.
        Some(1u128 << e)
    } else {
        10u128.checked_pow(e)
    }
}
