//! Unit tests of `wire.rs` on hand-built packets (and the lab captures when present).

use super::*;
use crate::sctp::chunk::{GapBlock, InitParam};
use crate::sctp::crc32c;
use std::net::Ipv6Addr;
use types::*;

// ---- test-only packet builder ----

/// A chunk with the given value; Length = 4 + value, padded to 4 bytes.
fn chunk(ctype: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let len = u16::try_from(4 + value.len()).unwrap();
    chunk_with_len(ctype, flags, len, value)
}

/// A chunk with an explicit Length field (for malformed chunks), padded to 4 bytes.
fn chunk_with_len(ctype: u8, flags: u8, len: u16, value: &[u8]) -> Vec<u8> {
    let mut c = vec![ctype, flags];
    c.extend_from_slice(&len.to_be_bytes());
    c.extend_from_slice(value);
    pad4(&mut c);
    c
}

/// A parameter / error cause TLV, padded to 4 bytes.
fn tlv(ptype: u16, body: &[u8]) -> Vec<u8> {
    let mut p = ptype.to_be_bytes().to_vec();
    p.extend_from_slice(&u16::try_from(4 + body.len()).unwrap().to_be_bytes());
    p.extend_from_slice(body);
    pad4(&mut p);
    p
}

fn pad4(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
}

/// An SCTP packet 5000 -> 5001, vtag 0x01020304, with a valid CRC32c.
fn packet(chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut p = vec![0x13, 0x88, 0x13, 0x89, 1, 2, 3, 4, 0, 0, 0, 0];
    for c in chunks {
        p.extend_from_slice(c);
    }
    let crc = crc32c::compute(&p);
    p[8..12].copy_from_slice(&crc.to_le_bytes());
    p
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn u32s(vals: &[u32]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_be_bytes()).collect()
}

/// Walks a fully captured packet expecting no error.
fn views(pkt: &[u8]) -> Vec<ChunkView<'_>> {
    SctpPacket::new_checked(pkt)
        .unwrap()
        .into_chunks(0)
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

/// Parses the single chunk of a packet built from `c`.
fn one(c: Vec<u8>) -> Chunk<'static> {
    let pkt: &'static [u8] = Box::leak(packet(&[c]).into_boxed_slice());
    let v = views(pkt);
    assert_eq!(v.len(), 1);
    assert!(!v[0].truncated);
    v[0].parse().unwrap()
}

/// The parse error kind of a packet made of the single chunk `c`.
fn parse_err(c: Vec<u8>) -> ChunkErrorKind {
    views(&packet(&[c]))[0].parse().unwrap_err().kind
}

fn short(ctype: u8, need: usize, have: usize) -> ChunkErrorKind {
    ChunkErrorKind::ValueTooShort { ctype, need, have }
}

/// Debug text, to compare parsed values compactly.
fn dbg<T: std::fmt::Debug>(x: T) -> String {
    format!("{x:?}")
}

/// Unwraps one enum variant: `get!(expr, Chunk::Data)`.
macro_rules! get {
    ($e:expr, $variant:path) => {
        match $e {
            $variant(x) => x,
            other => panic!("unexpected {other:?}"),
        }
    };
}

fn data_value(tsn: u32, sid: u16, ssn: u16, ppid: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = tsn.to_be_bytes().to_vec();
    v.extend_from_slice(&sid.to_be_bytes());
    v.extend_from_slice(&ssn.to_be_bytes());
    v.extend_from_slice(&ppid.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

fn walk(pkt: &[u8], missing: usize) -> Vec<Result<ChunkView<'_>, ChunkError>> {
    SctpPacket::new_unchecked(pkt)
        .into_chunks(missing)
        .collect()
}

// ---- common header ----

#[test]
fn common_header_fields_and_checksum() {
    let pkt = packet(&[chunk(COOKIE_ACK, 0, &[])]);
    let p = SctpPacket::new_checked(&pkt[..]).unwrap();
    assert_eq!((p.src_port(), p.dst_port()), (5000, 5001));
    assert_eq!(p.verification_tag(), 0x0102_0304);
    let field = u32::from_be_bytes(pkt[8..12].try_into().unwrap());
    assert_eq!(p.checksum(), field);
    assert!(p.verify_checksum());
    assert_eq!(p.payload(), &[11, 0, 0, 4]);
    assert_eq!(p.into_inner().len(), 16);
    let short_pkt = SctpPacket::new_checked(&pkt[..11]);
    assert_eq!(short_pkt, Err(WireError::TooShort(11)));
    // Unchecked on a short buffer: no chunks, no panic.
    assert_eq!(SctpPacket::new_unchecked(&pkt[..5]).chunks(0).count(), 0);
}

#[test]
fn bad_checksum_detected() {
    let mut pkt = packet(&[chunk(DATA, 3, &data_value(1, 0, 0, 0, b"hello"))]);
    assert!(SctpPacket::new_unchecked(&pkt).verify_checksum());
    pkt[20] ^= 1;
    assert!(!SctpPacket::new_unchecked(&pkt).verify_checksum());
    pkt[20] ^= 1;
    pkt[9] ^= 0x80;
    assert!(!SctpPacket::new_unchecked(&pkt).verify_checksum());
}

// ---- every chunk type ----

#[test]
fn data_fields_and_flags() {
    let v = data_value(0xdead_beef, 7, 0x1234, 51, &[0xaa; 5]);
    let d = get!(one(chunk(DATA, 0x03, &v)), Chunk::Data);
    assert_eq!(
        dbg(d),
        "DataChunk { idata: false, tsn: 3735928559, stream_id: 7, ssn_or_mid: 4660, \
         ppid_or_fsn: 51, payload_len: 5, flag_i: false, flag_u: false, flag_b: true, \
         flag_e: true }"
    );
    let flags = |f: u8| {
        let d = get!(one(chunk(DATA, f, &v)), Chunk::Data);
        (d.flag_i, d.flag_u, d.flag_b, d.flag_e)
    };
    assert_eq!(flags(0x08), (true, false, false, false));
    assert_eq!(flags(0x04), (false, true, false, false));
    assert_eq!(flags(0x02), (false, false, true, false));
    assert_eq!(flags(0x01), (false, false, false, true));
    assert_eq!(flags(0x0f), (true, true, true, true));
    assert_eq!(flags(0xf0), (false, false, false, false));
}

#[test]
fn i_data_fields() {
    let v = cat(&[
        &u32s(&[100]),
        &[0, 3, 0, 0],
        &u32s(&[0x0102_0304, 9]),
        b"xyz",
    ]);
    let d = get!(one(chunk(I_DATA, 0x02, &v)), Chunk::Data);
    assert!(d.idata && d.flag_b && !d.flag_e);
    assert_eq!((d.tsn, d.stream_id, d.ssn_or_mid), (100, 3, 0x0102_0304));
    assert_eq!((d.ppid_or_fsn, d.payload_len), (9, 3));
}

fn init_value(extra: &[Vec<u8>]) -> Vec<u8> {
    let mut v = u32s(&[0xcafe_f00d, 65536]);
    v.extend_from_slice(&[0, 10, 0, 11]);
    v.extend_from_slice(&u32s(&[42]));
    for p in extra {
        v.extend_from_slice(p);
    }
    v
}

#[test]
fn init_with_all_parameter_kinds() {
    let v6: [u8; 16] = "2001:db8::1".parse::<Ipv6Addr>().unwrap().octets();
    let params = vec![
        tlv(5, &[10, 0, 0, 1]),
        tlv(6, &v6),
        tlv(11, b"peer.example\0"),
        tlv(12, &[0, 5, 0, 6]),
        tlv(9, &u32s(&[3000])),
        tlv(0x8000, &[]),
        tlv(0xC000, &[]),
        // 5 chunk types: Length 9, padded to 12 (as real usrsctp INITs do).
        tlv(0x8008, &[0xc0, 0x0f, 0xc1, 0x80, 0x82]),
        tlv(0x8002, &[7; 32]),
        tlv(0x8003, &[0x80, 0xc1]),
        tlv(0x8004, &[0, 1]),
        tlv(0xC006, &u32s(&[0x11223344])),
        tlv(0x8005, &[0; 6]),
        tlv(0x1234, &[1, 2, 3]),
    ];
    let i = get!(one(chunk(INIT, 0, &init_value(&params))), Chunk::Init);
    assert!(!i.ack);
    assert_eq!((i.initiate_tag, i.a_rwnd), (0xcafe_f00d, 65536));
    let streams = (i.outbound_streams, i.inbound_streams);
    assert_eq!((streams, i.initial_tsn), ((10, 11), 42));
    let want = [
        "Address(10.0.0.1)",
        "Address(2001:db8::1)",
        "HostName(\"peer.example\")",
        "SupportedAddressTypes([5, 6])",
        "CookiePreservative(3000)",
        "EcnCapable",
        "ForwardTsnSupported",
        "SupportedExtensions([192, 15, 193, 128, 130])",
        "Auth { ptype: 32770, len: 36 }",
        "Auth { ptype: 32771, len: 6 }",
        "Auth { ptype: 32772, len: 6 }",
        "AdaptationLayer(287454020)",
        "Padding { len: 6 }",
        "Other { ptype: 4660, len: 7 }",
    ];
    assert_eq!(i.params.iter().map(dbg).collect::<Vec<_>>(), want);
}

#[test]
fn init_ack_state_cookie_and_bad_params() {
    let i = get!(
        one(chunk(INIT_ACK, 0, &init_value(&[tlv(7, &[9; 37])]))),
        Chunk::Init
    );
    assert!(i.ack);
    assert_eq!(i.params, vec![InitParam::StateCookie { len: 37 }]);
    // IPv4 parameter of length 12, and a parameter length 2.
    for p in [tlv(5, &[1; 8]), vec![0, 5, 0, 2]] {
        let pkt = packet(&[chunk(INIT, 0, &init_value(&[p]))]);
        let err = views(&pkt)[0].parse().unwrap_err();
        assert_eq!(err.offset, 12);
        let bad_at_20 = matches!(err.kind, ChunkErrorKind::BadParameter { offset: 20, .. });
        assert!(bad_at_20, "{err}");
    }
    // INIT shorter than its 20 fixed bytes.
    assert_eq!(parse_err(chunk(INIT, 0, &[0; 12])), short(INIT, 20, 16));
}

#[test]
fn sack_and_nr_sack() {
    let gaps = [0, 2, 0, 3, 0, 6, 0, 6];
    let v = cat(&[&u32s(&[1000, 5000]), &[0, 2, 0, 1], &gaps, &u32s(&[999])]);
    let s = get!(one(chunk(SACK, 0, &v)), Chunk::Sack);
    assert!(!s.nr);
    assert_eq!((s.cum_tsn_ack, s.a_rwnd), (1000, 5000));
    assert_eq!((s.n_gap_blocks, s.n_nr_gap_blocks, s.n_dup_tsns), (2, 0, 1));
    let gaps: Vec<_> = s.gap_blocks().collect();
    assert_eq!(
        gaps,
        [GapBlock { start: 2, end: 3 }, GapBlock { start: 6, end: 6 }]
    );
    assert_eq!(s.dup_tsns().collect::<Vec<_>>(), [999]);
    assert!(s.nr_gap_bytes.is_empty());

    let counts = [0, 1, 0, 2, 0, 1, 0, 0];
    let nr_gaps = [0, 4, 0, 5, 0, 8, 0, 9];
    let v = cat(&[
        &u32s(&[7, 1 << 20]),
        &counts,
        &[0, 2, 0, 2],
        &nr_gaps,
        &u32s(&[3]),
    ]);
    let s = get!(one(chunk(NR_SACK, 0, &v)), Chunk::Sack);
    assert!(s.nr);
    assert_eq!((s.cum_tsn_ack, s.a_rwnd), (7, 1 << 20));
    assert_eq!((s.n_gap_blocks, s.n_nr_gap_blocks, s.n_dup_tsns), (1, 2, 1));
    let gaps: Vec<_> = s.gap_blocks().map(|g| (g.start, g.end)).collect();
    assert_eq!(gaps, [(2, 2)]);
    let nr: Vec<_> = s.nr_gap_blocks().map(|g| (g.start, g.end)).collect();
    assert_eq!(nr, [(4, 5), (8, 9)]);
    assert_eq!(s.dup_tsns().collect::<Vec<_>>(), [3]);

    // Counts announcing more blocks than the chunk holds.
    let v = cat(&[&u32s(&[1, 2]), &[0, 3, 0, 0]]);
    assert_eq!(parse_err(chunk(SACK, 0, &v)), short(SACK, 28, 16));
    assert_eq!(parse_err(chunk(NR_SACK, 0, &v)), short(NR_SACK, 20, 16));
}

#[test]
fn heartbeat_abort_error() {
    let info = tlv(1, &[1, 2, 3, 4, 5, 6, 7, 8]);
    let hb = one(chunk(HEARTBEAT, 0, &info));
    assert_eq!(
        hb,
        Chunk::Heartbeat {
            ack: false,
            info: &info
        }
    );
    let hb_ack = one(chunk(HEARTBEAT_ACK, 0, &info));
    assert_eq!(
        hb_ack,
        Chunk::Heartbeat {
            ack: true,
            info: &info
        }
    );
    let causes = cat(&[&tlv(12, b"bye"), &tlv(1, &[0, 1, 0, 0])]);
    let want = "[ErrorCause { code: 12, len: 7 }, ErrorCause { code: 1, len: 8 }]";
    let abort = one(chunk(ABORT, 1, &causes));
    assert_eq!(
        dbg(abort),
        format!("Abort {{ t_bit: true, causes: {want} }}")
    );
    let abort = one(chunk(ABORT, 0, &causes));
    assert_eq!(
        dbg(abort),
        format!("Abort {{ t_bit: false, causes: {want} }}")
    );
    let empty = one(chunk(ABORT, 0, &[]));
    assert_eq!(dbg(empty), "Abort { t_bit: false, causes: [] }");
    let error = one(chunk(ERROR, 0, &causes));
    assert_eq!(dbg(error), format!("Error {{ causes: {want} }}"));
    // A cause running past the chunk end.
    let kind = parse_err(chunk(ERROR, 0, &[0, 1, 0, 12, 0, 0, 0, 0]));
    assert!(matches!(
        kind,
        ChunkErrorKind::BadParameter { offset: 4, .. }
    ));
}

#[test]
fn small_control_chunks() {
    let cases: [(u8, u8, Vec<u8>, &str); 15] = [
        (SHUTDOWN, 0, u32s(&[77]), "Shutdown { cum_tsn_ack: 77 }"),
        (SHUTDOWN_ACK, 0, vec![], "ShutdownAck"),
        (
            SHUTDOWN_COMPLETE,
            1,
            vec![],
            "ShutdownComplete { t_bit: true }",
        ),
        (
            SHUTDOWN_COMPLETE,
            0,
            vec![],
            "ShutdownComplete { t_bit: false }",
        ),
        (COOKIE_ECHO, 0, vec![5; 37], "CookieEcho { cookie_len: 37 }"),
        (COOKIE_ACK, 0, vec![], "CookieAck"),
        (ECNE, 0, u32s(&[5]), "Ecne { lowest_tsn: 5 }"),
        (CWR, 0, u32s(&[6]), "Cwr { lowest_tsn: 6 }"),
        (
            AUTH,
            0,
            cat(&[&[0, 2, 0, 1], &[0xee; 20]]),
            "Auth { key_id: 2, hmac_id: 1 }",
        ),
        (PAD, 0, vec![0; 10], "Pad { len: 10 }"),
        (
            FORWARD_TSN,
            0,
            u32s(&[1234, 0x0001_0002]),
            "ForwardTsn { i_forward: false, new_cum_tsn: 1234 }",
        ),
        (
            I_FORWARD_TSN,
            0,
            u32s(&[99, 0x0001_0001, 5]),
            "ForwardTsn { i_forward: true, new_cum_tsn: 99 }",
        ),
        (0x42, 0, vec![1, 2], "Unknown { ctype: 66 }"),
        (HEARTBEAT, 0, vec![], "Heartbeat { ack: false, info: [] }"),
        (ERROR, 0, vec![], "Error { causes: [] }"),
    ];
    for (ctype, flags, value, want) in cases {
        assert_eq!(dbg(one(chunk(ctype, flags, &value))), want);
    }
    assert_eq!(
        views(&packet(&[chunk(0x42, 0, &[])]))[0].type_name(),
        "UNKNOWN-66"
    );
    // Fixed fields missing.
    for t in [SHUTDOWN, ECNE, CWR, AUTH, FORWARD_TSN, I_FORWARD_TSN] {
        assert_eq!(parse_err(chunk(t, 0, &[0, 0])), short(t, 8, 6));
    }
}

#[test]
fn asconf_add_delete_set_primary_and_ack() {
    let v6 = "2001:db8::2".parse::<Ipv6Addr>().unwrap().octets();
    let add = cat(&[&u32s(&[1]), &tlv(5, &[192, 0, 2, 7])]);
    let del = cat(&[&u32s(&[2]), &tlv(6, &v6)]);
    let prim = cat(&[&u32s(&[3]), &tlv(5, &[192, 0, 2, 8])]);
    let v = cat(&[
        &u32s(&[0x8000_0001]),
        &tlv(5, &[192, 0, 2, 1]),
        &tlv(0xC001, &add),
        &tlv(0xC002, &del),
        &tlv(0xC004, &prim),
        &tlv(0xC006, &u32s(&[1])),
    ]);
    let a = get!(one(chunk(ASCONF, 0, &v)), Chunk::Asconf);
    assert!(!a.ack);
    assert_eq!(a.serial, 0x8000_0001);
    assert_eq!(a.address, Some("192.0.2.1".parse().unwrap()));
    let want = [
        "AddIp { correlation: 1, addr: Some(192.0.2.7) }",
        "DeleteIp { correlation: 2, addr: Some(2001:db8::2) }",
        "SetPrimary { correlation: 3, addr: Some(192.0.2.8) }",
        "Other { ptype: 49158, len: 8 }",
    ];
    assert_eq!(a.params.iter().map(dbg).collect::<Vec<_>>(), want);

    let ack = cat(&[
        &u32s(&[0x8000_0001]),
        &tlv(0xC005, &u32s(&[1])),
        &tlv(0xC003, &cat(&[&u32s(&[2]), &tlv(0x00A0, &[])])),
    ]);
    let a = get!(one(chunk(ASCONF_ACK, 0, &ack)), Chunk::Asconf);
    assert!(a.ack && a.address.is_none());
    let want = "[Success { correlation: 1 }, ErrorCause { correlation: 2 }]";
    assert_eq!(dbg(&a.params), want);
    // Add IP with a 2-byte body: shorter than the correlation id.
    let kind = parse_err(chunk(
        ASCONF,
        0,
        &cat(&[&u32s(&[1]), &tlv(0xC001, &[0, 1])]),
    ));
    assert!(
        matches!(kind, ChunkErrorKind::BadParameter { offset: 8, .. }),
        "{kind}"
    );
}

/// RFC 6525 4.1, 4.2, 4.4-4.6: the fields the stream analysis reads (stream lists, the response
/// sequence number of an outgoing reset, the result, the number of new streams).
#[test]
fn reconfig_stream_fields() {
    let v = cat(&[
        // Outgoing SSN reset: request 10, response 20, last TSN 30, streams 1, 2, 3 (+ padding).
        &tlv(13, &cat(&[&u32s(&[10, 20, 30]), &[0, 1, 0, 2, 0, 3]])),
        // Incoming SSN reset of all streams.
        &tlv(14, &u32s(&[11])),
        // Response to request 10: Denied (2).
        &tlv(16, &u32s(&[10, 2])),
        // Add 300 outgoing / 7 incoming streams.
        &tlv(17, &u32s(&[13, 300 << 16])),
        &tlv(18, &u32s(&[14, 7 << 16])),
    ]);
    let params = match one(chunk(RE_CONFIG, 0, &v)) {
        Chunk::Reconfig { params } => params,
        other => panic!("{other:?}"),
    };
    let got: Vec<_> = params
        .iter()
        .map(|p| (p.ptype, p.resp_seq, p.result, p.new_streams, p.stream_count))
        .collect();
    assert_eq!(
        got,
        [
            (13, Some(20), None, None, 3),
            (14, None, None, None, 0),
            (16, None, Some(2), None, 0),
            (17, None, None, Some(300), 0),
            (18, None, None, Some(7), 0),
        ]
    );
}

#[test]
fn reconfig_parameters() {
    let v = cat(&[
        &tlv(13, &u32s(&[10, 20, 30, 0x0001_0002])),
        &tlv(14, &u32s(&[11])),
        &tlv(15, &u32s(&[12])),
        &tlv(16, &u32s(&[10, 1])),
        &tlv(17, &u32s(&[13, 0x0004_0000])),
        &tlv(18, &u32s(&[14, 0x0002_0000])),
        &tlv(99, &[]),
    ]);
    let params = match one(chunk(RE_CONFIG, 0, &v)) {
        Chunk::Reconfig { params } => params,
        other => panic!("{other:?}"),
    };
    let got: Vec<_> = params.iter().map(|p| (p.ptype, p.req_seq, p.len)).collect();
    let want = [
        (13, 10, 20),
        (14, 11, 8),
        (15, 12, 8),
        (16, 10, 12),
        (17, 13, 12),
        (18, 14, 12),
    ];
    let mut want: Vec<_> = want.iter().map(|&(t, s, l)| (t, Some(s), l)).collect();
    want.push((99, None, 4));
    assert_eq!(got, want);
    // Outgoing SSN reset request shorter than its 16 bytes.
    let kind = parse_err(chunk(RE_CONFIG, 0, &tlv(13, &u32s(&[1]))));
    assert!(matches!(
        kind,
        ChunkErrorKind::BadParameter { offset: 4, .. }
    ));
}

#[test]
fn bundled_chunks_offsets_and_padding() {
    let pkt = packet(&[
        chunk(COOKIE_ECHO, 0, &[1; 5]),
        chunk(DATA, 3, &data_value(1, 0, 0, 0, &[2; 3])),
        chunk(SACK, 0, &[0; 12]),
    ]);
    let v = views(&pkt);
    let got: Vec<_> = v
        .iter()
        .map(|c| (c.ctype, c.offset, c.length, c.value.len()))
        .collect();
    assert_eq!(
        got,
        [
            (COOKIE_ECHO, 12, 9, 5),
            (DATA, 24, 19, 15),
            (SACK, 44, 16, 12)
        ]
    );
    assert_eq!(v[1].type_name(), "DATA");
    // Last chunk without its padding is tolerated.
    let mut pkt = packet(&[chunk(DATA, 3, &data_value(1, 0, 0, 0, &[2; 3]))]);
    pkt.pop();
    assert_eq!(views(&pkt).len(), 1);
}

// ---- truncation ----

#[test]
fn truncated_data_keeps_header() {
    let pkt = packet(&[
        chunk(SACK, 0, &[0; 12]),
        chunk(DATA, 1, &data_value(0x1111_2222, 4, 5, 6, &[0; 1000])),
    ]);
    // Snap length keeps 10 payload bytes of the DATA chunk.
    let cut = 12 + 16 + 16 + 10;
    let v: Vec<_> = walk(&pkt[..cut], pkt.len() - cut);
    assert_eq!(v.len(), 2);
    let data = v[1].unwrap();
    assert!(data.truncated && !v[0].unwrap().truncated);
    assert_eq!((data.length, data.value.len(), data.offset), (1016, 22, 28));
    let d = get!(data.parse().unwrap(), Chunk::Data);
    assert_eq!((d.tsn, d.stream_id, d.payload_len), (0x1111_2222, 4, 1000));
    // Cut inside the DATA header: the chunk is reported but cannot be decoded.
    let cut = 12 + 16 + 10;
    let v = walk(&pkt[..cut], pkt.len() - cut);
    assert_eq!(v[1].unwrap().parse().unwrap_err().kind, short(DATA, 16, 10));
    // Cut inside the chunk header: silently ends.
    let cut = 12 + 16 + 2;
    assert_eq!(walk(&pkt[..cut], pkt.len() - cut).len(), 1);
    // Cut after a whole chunk.
    assert_eq!(walk(&pkt[..28], pkt.len() - 28).len(), 1);
}

#[test]
fn truncated_sack_keeps_fitting_blocks() {
    let blocks: Vec<u8> = (1..=10u8).flat_map(|i| [0, i * 2, 0, i * 2 + 1]).collect();
    let v = cat(&[&u32s(&[500, 9000]), &[0, 10, 0, 2], &blocks, &u32s(&[1, 2])]);
    let pkt = packet(&[chunk(SACK, 0, &v)]);
    // Keep the SACK header and 3.5 gap blocks.
    let cut = 12 + 16 + 14;
    let view = walk(&pkt[..cut], pkt.len() - cut)[0].unwrap();
    assert!(view.truncated);
    let s = get!(view.parse().unwrap(), Chunk::Sack);
    assert_eq!((s.cum_tsn_ack, s.n_gap_blocks, s.n_dup_tsns), (500, 10, 2));
    assert_eq!(s.gap_bytes.len(), 12);
    assert_eq!(
        s.gap_blocks().map(|g| g.start).collect::<Vec<_>>(),
        [2, 4, 6]
    );
    assert!(s.dup_bytes.is_empty());
    // Cut in the dup TSNs: all gap blocks and one dup kept.
    let view = walk(&pkt[..pkt.len() - 2], 2)[0].unwrap();
    let s = get!(view.parse().unwrap(), Chunk::Sack);
    assert_eq!(s.gap_blocks().count(), 10);
    assert_eq!(s.dup_tsns().collect::<Vec<_>>(), [1]);
}

#[test]
fn truncated_init_keeps_complete_params() {
    let params = [tlv(5, &[10, 0, 0, 1]), tlv(7, &[0; 100]), tlv(6, &[0; 16])];
    let pkt = packet(&[chunk(INIT_ACK, 0, &init_value(&params))]);
    let cut = 12 + 20 + 8 + 30;
    let view = walk(&pkt[..cut], pkt.len() - cut)[0].unwrap();
    let i = get!(view.parse().unwrap(), Chunk::Init);
    assert_eq!(
        dbg(i.params),
        "[Address(10.0.0.1), StateCookie { len: 100 }]"
    );
}

// ---- walk errors ----

#[test]
fn zero_and_short_chunk_lengths() {
    for len in [0u8, 3] {
        let pkt = packet(&[
            chunk(DATA, 0, &data_value(1, 0, 0, 0, b"ab")),
            vec![0, 0, 0, len],
        ]);
        let mut it = SctpPacket::new_unchecked(&pkt[..]).into_chunks(0);
        assert!(it.next().unwrap().is_ok());
        let err = it.next().unwrap().unwrap_err();
        let kind = ChunkErrorKind::LengthTooSmall(len.into());
        assert_eq!(err, ChunkError { offset: 32, kind });
        assert!(it.next().is_none() && it.next().is_none());
    }
    let pkt = packet(&[vec![0, 0, 0, 0, 0, 0, 0, 0]]);
    let err = walk(&pkt, 0)[0].unwrap_err();
    assert_eq!(
        err.to_string(),
        "SCTP chunk at offset 12: chunk length 0 < 4"
    );
}

#[test]
fn length_past_end_and_trailing_bytes() {
    let pkt = packet(&[chunk_with_len(
        DATA,
        0,
        40,
        &data_value(1, 0, 0, 0, b"abcd"),
    )]);
    let v = walk(&pkt, 0);
    assert_eq!(v.len(), 1);
    let err = v[0].unwrap_err();
    let past = |available| ChunkErrorKind::PastEnd {
        length: 40,
        available,
    };
    assert_eq!(err.kind, past(20));
    assert!(err
        .to_string()
        .starts_with("SCTP chunk at offset 12: chunk length 40 goes past"));
    // Also an error when it goes past the original (uncut) packet end.
    assert_eq!(walk(&pkt, 10)[0].unwrap_err().kind, past(30));

    let mut pkt = packet(&[chunk(COOKIE_ACK, 0, &[])]);
    pkt.extend_from_slice(&[0, 0]);
    let v = walk(&pkt, 0);
    assert_eq!(v.len(), 2);
    let kind = ChunkErrorKind::TrailingBytes(2);
    assert_eq!(v[1].unwrap_err(), ChunkError { offset: 16, kind });
    assert_eq!(walk(&pkt, 100).len(), 1);
}

#[test]
fn data_with_length_10() {
    let pkt = packet(&[chunk_with_len(DATA, 3, 10, &[0, 0, 0, 1, 0, 0])]);
    let err = views(&pkt)[0].parse().unwrap_err();
    assert_eq!(err.kind, short(DATA, 16, 10));
    let text = "SCTP chunk at offset 12: DATA chunk of 10 bytes, needs at least 16";
    assert_eq!(err.to_string(), text);
    let kind = parse_err(chunk_with_len(I_DATA, 3, 16, &[0; 12]));
    assert_eq!(kind, short(I_DATA, 20, 16));
}

// ---- scale and robustness ----

#[test]
fn hundred_thousand_chunks() {
    let mut pkt = vec![0u8; 12];
    for i in 0..100_000u32 {
        let t = if i % 2 == 0 { PAD } else { ABORT };
        pkt.extend_from_slice(&[t, (i & 1) as u8, 0, 4]);
    }
    let start = std::time::Instant::now();
    let p = SctpPacket::new_checked(&pkt[..]).unwrap();
    let (mut n, mut aborts) = (0, 0);
    for c in p.chunks(0) {
        n += 1;
        if let Chunk::Abort { t_bit, causes } = c.unwrap().parse().unwrap() {
            assert!(t_bit && causes.is_empty());
            aborts += 1;
        }
    }
    assert_eq!((n, aborts), (100_000, 50_000));
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn random_bytes_never_panic() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as usize
    };
    let add_ip = tlv(0xC001, &cat(&[&u32s(&[1]), &tlv(5, &[1; 4])]));
    let templates = [
        packet(&[chunk(
            INIT,
            0,
            &init_value(&[tlv(5, &[1; 4]), tlv(0x8008, &[1; 3])]),
        )]),
        packet(&[chunk(
            SACK,
            0,
            &cat(&[&u32s(&[1, 2]), &[0, 2, 0, 1], &[0; 12]]),
        )]),
        packet(&[chunk(ASCONF, 0, &cat(&[&u32s(&[1]), &add_ip]))]),
        packet(&[
            chunk(RE_CONFIG, 0, &tlv(13, &[0; 12])),
            chunk(ERROR, 0, &tlv(1, &[0; 4])),
        ]),
    ];
    let types = [
        0u8, 1, 2, 3, 4, 5, 6, 9, 10, 12, 13, 15, 16, 64, 128, 130, 132, 192, 193, 194,
    ];
    for round in 0..20_000 {
        let mut pkt = templates[round % templates.len()].clone();
        for _ in 0..rnd() % 4 {
            let i = rnd() % pkt.len();
            pkt[i] = rnd() as u8;
        }
        if round % 3 == 0 {
            pkt[12] = types[rnd() % types.len()];
        }
        let cut = rnd() % (pkt.len() + 1);
        for (bytes, missing) in [(&pkt[..], 0), (&pkt[..cut], pkt.len() - cut)] {
            for c in SctpPacket::new_unchecked(bytes).chunks(missing).flatten() {
                let _ = c.parse();
            }
        }
    }
}

// ---- real captures ----

#[test]
fn lab_capture_all_chunks_parse() {
    let path = "/work/shared/captures/lab/fmt_sender.pcap";
    let Some(packets) = crc32c::lab_sctp_packets(path) else {
        eprintln!("skipping: {path} absent");
        return;
    };
    let mut counts = std::collections::BTreeMap::new();
    for (pkt, missing) in &packets {
        let p = SctpPacket::new_checked(&pkt[..]).unwrap();
        assert!(p.verify_checksum());
        for c in p.chunks(*missing) {
            let c = c.unwrap();
            c.parse().unwrap_or_else(|e| panic!("{e}"));
            *counts.entry(c.ctype).or_insert(0) += 1;
        }
    }
    // Chunk type counts as tshark reports them.
    assert_eq!(counts.get(&DATA), Some(&330));
    assert_eq!(counts.get(&SACK), Some(&137));
    assert_eq!(counts.get(&HEARTBEAT), Some(&6));
    let init = get!(views(&packets[0].0)[0].parse().unwrap(), Chunk::Init);
    let ext = InitParam::SupportedExtensions(vec![0xc0, 0x0f, 0xc1, 0x80, 0x82]);
    assert!(init.params.contains(&ext));
}

#[test]
fn lab_snap96_capture_truncated_chunks() {
    let path = "/work/shared/captures/lab/fmt_snap96_sender.pcap";
    let Some(packets) = crc32c::lab_sctp_packets(path) else {
        eprintln!("skipping: {path} absent");
        return;
    };
    let mut truncated_data = 0;
    for (pkt, missing) in &packets {
        for c in SctpPacket::new_unchecked(&pkt[..]).chunks(*missing) {
            let c = c.unwrap();
            match c.parse() {
                Ok(Chunk::Data(_)) if c.truncated => truncated_data += 1,
                Ok(_) => {}
                // Only a truncated chunk may lack its fixed fields.
                Err(e) => assert!(c.truncated, "{e}"),
            }
        }
    }
    assert!(truncated_data > 100, "{truncated_data}");
}
