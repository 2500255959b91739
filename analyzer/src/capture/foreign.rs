//! What a file that is not pcap or pcapng is, when its first bytes say so: compressions read by
//! other tools, capture formats of other tools, and text, so that the error tells the user
//! what they gave and how to turn it into a capture this reader takes.

/// A compression that is not read directly, named by the magic that starts `head`: (its name,
/// the command that undoes it).
pub(crate) fn foreign_compression(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const KNOWN: [(&[u8], &str, &str); 5] = [
        // xz file format 2.1.1.1: header magic.
        (&[0xFD, b'7', b'z', b'X', b'Z', 0x00], "xz", "xz -d"),
        (b"BZh", "bzip2", "bunzip2"),
        // APPNOTE.TXT 4.3.7: local file header signature.
        (b"PK\x03\x04", "zip", "unzip"),
        (&[b'7', b'z', 0xBC, 0xAF, 0x27, 0x1C], "7z", "7z x"),
        // LZ4's legacy frame (lz4 -l), which its frame decoder does not read.
        (&[0x02, 0x21, 0x4C, 0x18], "lz4 legacy-format", "lz4 -d"),
    ];
    KNOWN
        .iter()
        .find(|(magic, ..)| head.starts_with(magic))
        .map(|&(_, name, tool)| (name, tool))
}

/// Capture formats of other tools, by the magic their files start with: (magic, name). Each
/// magic is the one Wireshark's wiretap reads the format by; the files that Wireshark 4.0's
/// `editcap -F` writes start with them (snoop, netmon1/2, ngsniffer, ngwsniffer, observer,
/// nettl, visual, 5views, k12text, lanalyzer: checked on files it wrote).
const FORMATS: [(&[u8], &str); 15] = [
    // RFC 1761 2.1: the identification pattern "snoop" padded with NULs to 8 bytes.
    (b"snoop\0\0\0", "Sun snoop (Solaris)"),
    (b"btsnoop\0", "btsnoop (Bluetooth HCI)"),
    (b"RTSS", "Microsoft Network Monitor 1.x"),
    (b"GMBU", "Microsoft Network Monitor 2.x"),
    (b"TRSNIFF data    \x1a", "Sniffer (DOS)"),
    (b"XCP\0", "NetXray / Sniffer (Windows)"),
    (
        b"ObserverPktBufferVersion",
        "Viavi (Network Instruments) Observer",
    ),
    (b"TR\0d\0", "HP-UX nettl"),
    (b"iptrace 1.0", "AIX iptrace 1.0"),
    (b"iptrace 2.0", "AIX iptrace 2.0"),
    (b"\x05VNF", "Visual Networks"),
    (&[0xAA, 0xAA, 0xAA, 0xAA], "InfoVista 5View"),
    (
        &[0x00, 0x00, 0x02, 0x00, 0x12, 0x05, 0x00, 0x10],
        "Tektronix K12 (.rf5)",
    ),
    (b"+---------+", "Tektronix K12 text"),
    (&[0x01, 0x10, 0x4C, 0x00], "Novell LANalyzer"),
];

/// The capture format of another tool that `head` (the file's first bytes) starts with.
pub(crate) fn foreign_format(head: &[u8]) -> Option<&'static str> {
    FORMATS
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map(|&(_, name)| name)
}

/// Bytes of a text file's start shown in the error.
const TEXT_SHOWN: usize = 60;

/// What to do about a text file given as a capture: the common mistakes have their own advice.
const TEXT_ADVICE: [(&str, &str); 3] = [
    // The pointer Git LFS commits in place of a large file (git-lfs spec v1).
    (
        "version https://git-lfs.github.com/spec/",
        "a Git LFS pointer, not the capture it stands for: fetch the capture (git lfs pull) and analyse that",
    ),
    ("<!doctype html", WEB_PAGE),
    ("<html", WEB_PAGE),
];

/// What to do about a web page (an HTML document starts either way).
const WEB_PAGE: &str = "a web page saved instead of the capture it links to: download the raw file";

/// What to do about any other text.
const TEXT_OTHER: &str = "give the capture file itself, not a text export of it";

/// When `head` reads as text (a dissection, a hex dump, a log, a Git LFS pointer or a web page
/// saved instead of the capture): its first non-blank line, shortened, and what to do. Text: its
/// first 256 bytes (or all of a shorter file) are valid UTF-8 with no control character but
/// tab, CR and LF. Capture files start with binary magics.
pub(crate) fn text_start(head: &[u8]) -> Option<(String, &'static str)> {
    let probe = &head[..head.len().min(256)];
    // A multi-byte character cut by the probe's end is still text.
    let valid = match std::str::from_utf8(probe) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&probe[..e.valid_up_to()]).ok()?,
        Err(_) => return None,
    };
    if valid.is_empty()
        || valid
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\r' | '\n'))
    {
        return None;
    }
    let line = valid
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(valid)
        .trim();
    let lower = line.to_ascii_lowercase();
    let advice = TEXT_ADVICE
        .iter()
        .find(|(start, _)| lower.starts_with(start))
        .map_or(TEXT_OTHER, |&(_, advice)| advice);
    let shown: String = line.chars().take(TEXT_SHOWN).collect();
    let more = if line.chars().count() > TEXT_SHOWN {
        "..."
    } else {
        ""
    };
    Some((format!("{shown}{more}"), advice))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_tools_formats_are_named_by_their_magic() {
        // The first bytes of files that Wireshark 4.0.17's editcap -F wrote here.
        let written: [(&[u8], &str); 6] = [
            (b"snoop\0\0\0\0\0\0\x02", "Sun snoop (Solaris)"),
            (b"GMBU\0\x02\x01\0", "Microsoft Network Monitor 2.x"),
            (b"RTSS\x01\x01\x01\0", "Microsoft Network Monitor 1.x"),
            (b"XCP\x00002.001\0", "NetXray / Sniffer (Windows)"),
            (b"TR\0d\0\0\0\0\0\0\0\x80/tmp", "HP-UX nettl"),
            (b"+---------+---------------+", "Tektronix K12 text"),
        ];
        for (head, name) in written {
            assert_eq!(foreign_format(head), Some(name));
        }
        // pcap, pcapng and the compressions are not other formats.
        for head in [
            &[0xD4, 0xC3, 0xB2, 0xA1][..],
            &[0x0A, 0x0D, 0x0D, 0x0A],
            &[0x1F, 0x8B, 0x08, 0x00],
            &[0x28, 0xB5, 0x2F, 0xFD],
        ] {
            assert_eq!(foreign_format(head), None);
        }
        // Shorter than a magic.
        assert_eq!(foreign_format(b"snoo"), None);
    }

    #[test]
    fn text_is_told_with_its_first_line() {
        let dissection =
            b"Frame 1: 98 bytes on wire (784 bits), 98 bytes captured (784 bits) on interface";
        assert_eq!(
            text_start(dissection),
            Some((
                "Frame 1: 98 bytes on wire (784 bits), 98 bytes captured (784...".to_string(),
                TEXT_OTHER
            ))
        );
        let hex = text_start(b"\n\n  0000  00 11 22 33 44 55\n").unwrap();
        assert_eq!(hex.0, "0000  00 11 22 33 44 55");
        // The common mistakes get their own advice.
        let lfs = b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a2146\nsize 919240\n";
        assert!(text_start(lfs).unwrap().1.contains("git lfs pull"));
        for page in [&b"<!DOCTYPE html>\n<html lang=en>"[..], b"\n<HTML><HEAD>"] {
            assert!(text_start(page)
                .unwrap()
                .1
                .contains("download the raw file"));
        }
        // UTF-8 cut in the middle of a character at the probe's end is still text.
        let mut long = "é".repeat(200).into_bytes();
        long.truncate(301);
        assert!(text_start(&long).is_some());
        // Binary: a pcap header, NULs, other control bytes.
        assert_eq!(text_start(&[0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0]), None);
        assert_eq!(text_start(b"abc\0def"), None);
        assert_eq!(text_start(b"abc\x1bdef"), None);
        assert_eq!(text_start(b""), None);
    }
}
