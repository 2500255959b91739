//! Command-line inputs: capture files as given, and directories searched (recursively, sorted) for
//! capture files by name.

use std::path::{Path, PathBuf};

/// File names taken from a directory: pcap, pcapng, cap, and their compressed forms (`.gz`,
/// `.zst`, `.lz4`: `COMPRESSED_EXTS`), also with a number after the extension, as `tcpdump -C 100 -w x.pcap` names the files after the
/// first (`x.pcap1`, `x.pcap2`, ...; `--rotated` reads them as one capture).
pub fn is_capture_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let name = strip_compressed_ext(&name);
    let name = name.trim_end_matches(|c: char| c.is_ascii_digit());
    [".pcap", ".pcapng", ".cap", ".erf"]
        .iter()
        .any(|e| name.ends_with(e))
}

/// Extensions of the compressions the reader decodes (`capture::Compression`; it goes by the
/// magic, these only pick files from directories and name them).
pub const COMPRESSED_EXTS: [&str; 4] = [".gz", ".zst", ".zstd", ".lz4"];

/// `name` without a compression extension (`COMPRESSED_EXTS`, lower case).
pub fn strip_compressed_ext(name: &str) -> &str {
    COMPRESSED_EXTS
        .iter()
        .find_map(|e| name.strip_suffix(e))
        .unwrap_or(name)
}

/// Files stay as given (a non-capture name is still analysed, and fails clearly); each directory
/// is replaced by the capture files below it, sorted.
pub fn expand(inputs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found);
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// How the files of `captures` make captures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grouping {
    /// Each file is a capture of its own.
    #[default]
    EachFile,
    /// All the files are one capture (a rotation: `--merge`).
    Merge,
    /// Each rotation among the files is one capture (`capture::rotation::group_rotations`:
    /// `--rotated`).
    Rotated,
}

/// The captures of command-line inputs (files and directories, `expand`), each as the files
/// it is made of: what `sctp-analyzer analyze` (and the Python package) analyse.
pub fn captures(inputs: &[PathBuf], grouping: Grouping) -> Vec<Vec<PathBuf>> {
    let files = expand(inputs);
    match grouping {
        Grouping::EachFile => files.into_iter().map(|f| vec![f]).collect(),
        Grouping::Merge => vec![files],
        Grouping::Rotated => crate::capture::rotation::group_rotations(&files),
    }
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, found),
            Ok(t) if t.is_file() && is_capture_name(&p) => found.push(p),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_directories() {
        assert!(is_capture_name(Path::new("a/b.pcap")));
        assert!(is_capture_name(Path::new("x.PCAPNG")));
        assert!(is_capture_name(Path::new("multi.pcap.gz")));
        assert!(is_capture_name(Path::new("core.pcapng.zst")));
        assert!(is_capture_name(Path::new("ring.pcap3.lz4")));
        assert!(!is_capture_name(Path::new("notes.txt.zst")));
        assert!(!is_capture_name(Path::new("notes.txt")));
        assert!(!is_capture_name(Path::new("log.gz")));
        // tcpdump -C: the files after the first carry a number after the extension.
        assert!(is_capture_name(Path::new("d/trace.pcap1")));
        assert!(is_capture_name(Path::new("d/trace.pcap12")));
        assert!(!is_capture_name(Path::new("d/trace.txt1")));
        assert!(!is_capture_name(Path::new("d/pcap1")));
        let dir = std::env::temp_dir().join(format!("sctp-inputs-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in ["b.pcap", "sub/a.pcapng", "readme.md"] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let got = expand(&[dir.clone(), PathBuf::from("given.txt")]);
        assert_eq!(
            got,
            vec![
                dir.join("b.pcap"),
                dir.join("sub/a.pcapng"),
                PathBuf::from("given.txt")
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn captures_each_merged_or_by_rotation() {
        let dir = std::env::temp_dir().join(format!("sctp-captures-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["ring_1.pcap", "ring_2.pcap", "y.pcap"] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let (x, x1, y) = (
            dir.join("ring_1.pcap"),
            dir.join("ring_2.pcap"),
            dir.join("y.pcap"),
        );
        let given = std::slice::from_ref(&dir);
        assert_eq!(
            captures(given, Grouping::EachFile),
            vec![vec![x.clone()], vec![x1.clone()], vec![y.clone()]]
        );
        assert_eq!(
            captures(given, Grouping::Merge),
            vec![vec![x.clone(), x1.clone(), y.clone()]]
        );
        assert_eq!(
            captures(given, Grouping::Rotated),
            vec![vec![x, x1], vec![y]]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
