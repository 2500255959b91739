//! Rotated captures read as one: the files of a ring buffer or a `tcpdump -C` / `-G` rotation,
//! ordered by their first packet and read one after the other as one continuous capture, with
//! every file boundary where packets stop for a while told as a capture gap.
//!
//! Frame numbers run on across the files (as the files concatenated would number them); byte
//! offsets in warnings stay those of the file they name. A file that cannot be opened is skipped
//! with a warning: the others are still read.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use super::{CaptureError, CaptureReader};

/// Silence at a file boundary above which it is told as a capture gap (no inference across it):
/// longer than any timer the analysis measures at the capture's own pace would go unnoticed
/// inside one file, shorter than a heartbeat interval (RFC 9260 8.3: 30 s by default), so that a
/// file missing from a rotation is not taken for a quiet link.
pub const GAP_NS: i64 = 1_000_000_000;

/// One file of a rotated capture, as read.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemberFile {
    pub path: String,
    /// Frame number (in the merged capture) of its first frame; 0 when it held none.
    pub first_frame: u64,
    pub frames: u64,
    /// Absolute times of its first and last frame (Unix seconds).
    pub first_epoch_s: Option<f64>,
    pub last_epoch_s: Option<f64>,
    /// Time from the previous file's last frame to this file's first, s (negative: the files
    /// overlap).
    pub gap_before_s: Option<f64>,
}

/// A file of a rotation and the timestamp of its first frame (None: it holds none).
pub type FileStart = (PathBuf, Option<i64>);

/// A capture gap at a file boundary: no frame between `start_ns` and `end_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    pub start_ns: i64,
    pub end_ns: i64,
}

/// The files of a rotated capture still to read, and what was read of the others.
#[derive(Debug)]
pub(crate) struct Rotation {
    queue: VecDeque<FileStart>,
    pub members: Vec<MemberFile>,
    /// Warnings of the files read so far (each naming its file) and of the boundaries.
    pub warnings: Vec<String>,
    /// Frames and input bytes of the files before the current one.
    pub frame_base: u64,
    pub bytes_base: u64,
    /// The current file's figures were taken (`close_current`).
    closed: bool,
}

impl Rotation {
    /// `first`: the file opened first; `rest`: the following ones, in reading order, each with
    /// the timestamp of its first frame.
    pub fn new(first: &Path, first_ns: Option<i64>, rest: Vec<FileStart>) -> Self {
        let mut warnings = Vec::new();
        if !rest.is_empty() {
            warnings.push(format!(
                "{} files read as one rotated capture, in the order of their first packet; frame numbers run on across them (`files`)",
                rest.len() + 1
            ));
        }
        Rotation {
            queue: rest.into(),
            members: vec![MemberFile {
                path: first.display().to_string(),
                first_frame: 0,
                frames: 0,
                first_epoch_s: first_ns.map(epoch_s),
                last_epoch_s: None,
                gap_before_s: None,
            }],
            warnings,
            frame_base: 0,
            bytes_base: 0,
            closed: false,
        }
    }

    /// The current file ended: its figures and warnings are kept, and the next file that opens
    /// is returned with the gap before it (when its first frame comes more than `GAP_NS` after
    /// the last frame read). None when no file is left.
    pub fn next(
        &mut self,
        done: &CaptureReader,
        last_ns: Option<i64>,
    ) -> Option<(CaptureReader, Option<Gap>)> {
        self.close_current(done, last_ns);
        while let Some((path, first_ns)) = self.queue.pop_front() {
            let name = path.display().to_string();
            let reader = match CaptureReader::open(&path) {
                Ok(r) => r,
                Err(e) => {
                    self.warnings
                        .push(format!("{name}: {e}: file skipped, the others read"));
                    continue;
                }
            };
            let gap_before = first_ns.zip(last_ns).map(|(f, l)| f - l);
            let mut gap = None;
            match gap_before {
                Some(g) if g > GAP_NS => {
                    self.warnings.push(format!(
                        "capture gap of {:.3} s before {name} (frame {}): no packet between the previous file's last frame and its first; no inference across it (RTT, RTO, failover times)",
                        g as f64 / 1e9,
                        self.frame_base + 1
                    ));
                    gap = last_ns.zip(first_ns).map(|(start_ns, end_ns)| Gap { start_ns, end_ns });
                }
                Some(g) if g < 0 => self.warnings.push(format!(
                    "{name} starts {:.3} s before the previous file ends: the files overlap (not one rotation?); read one after the other",
                    -g as f64 / 1e9
                )),
                _ => {}
            }
            self.members.push(MemberFile {
                path: name,
                first_frame: 0,
                frames: 0,
                first_epoch_s: first_ns.map(epoch_s),
                last_epoch_s: None,
                gap_before_s: gap_before.map(|g| g as f64 / 1e9),
            });
            self.closed = false;
            return Some((reader, gap));
        }
        None
    }

    /// Closes the current file: its frame count, last timestamp and warnings.
    pub fn close_current(&mut self, done: &CaptureReader, last_ns: Option<i64>) {
        let Some(m) = self.members.last_mut().filter(|_| !self.closed) else {
            return;
        };
        self.closed = true;
        m.frames = done.frames_read();
        if m.frames > 0 {
            m.first_frame = self.frame_base + 1;
            m.last_epoch_s = last_ns.map(epoch_s);
        }
        for w in done.warnings() {
            self.warnings.push(format!("{}: {w}", m.path));
        }
        self.frame_base += done.frames_read();
        self.bytes_base += done.input_bytes_read();
    }
}

fn epoch_s(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// Orders the files of a rotated capture by their first packet (files without a packet last, in
/// the order given). A file that cannot be opened keeps its place and fails again, with a
/// warning, when its turn comes; the error is returned only when no file opens.
pub fn order_by_first_packet(paths: &[PathBuf]) -> Result<Vec<FileStart>, (PathBuf, CaptureError)> {
    let mut first_err = None;
    let mut opened = false;
    let mut keyed: Vec<(Option<i64>, usize, PathBuf)> = Vec::with_capacity(paths.len());
    for (i, p) in paths.iter().enumerate() {
        let first_ns = match CaptureReader::open(p) {
            Ok(mut r) => {
                opened = true;
                r.next_frame().map(|f| f.ts_ns)
            }
            Err(e) => {
                first_err.get_or_insert((p.clone(), e));
                None
            }
        };
        keyed.push((first_ns, i, p.clone()));
    }
    if let Some(e) = first_err.filter(|_| !opened) {
        return Err(e);
    }
    // Files with a first packet by its time (the given order between equal times), then the
    // others in the given order.
    keyed.sort_by_key(|&(t, i, _)| (t.is_none(), t, i));
    Ok(keyed.into_iter().map(|(t, _, p)| (p, t)).collect())
}

/// The rotation a file belongs to by its name: the name with every run of digits (sequence
/// numbers, dates) taken out, in its folder (`tcpdump -C`: `x.pcap`, `x.pcap1`; `-G` and
/// dumpcap ring buffers: `x_00001_20261201120000.pcapng`).
fn rotation_key(p: &Path) -> (PathBuf, String) {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let key: String = name.chars().filter(|c| !c.is_ascii_digit()).collect();
    (p.parent().map(Path::to_path_buf).unwrap_or_default(), key)
}

/// Groups files into rotations by name (`rotation_key`), each group in the order of the first
/// file given of it; a file alone in its group is a capture of its own.
pub fn group_rotations(paths: &[PathBuf]) -> Vec<Vec<PathBuf>> {
    let mut order: Vec<(PathBuf, String)> = Vec::new();
    let mut groups: BTreeMap<(PathBuf, String), Vec<PathBuf>> = BTreeMap::new();
    for p in paths {
        let k = rotation_key(p);
        let g = groups.entry(k.clone()).or_default();
        if g.is_empty() {
            order.push(k);
        }
        g.push(p.clone());
    }
    order
        .into_iter()
        .filter_map(|k| groups.remove(&k))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_are_grouped_by_name_without_digits() {
        let p = |s: &str| PathBuf::from(s);
        let files = vec![
            p("d/ring_00001_20261201120000.pcapng"),
            p("d/trace.pcap"),
            p("d/ring_00002_20261201120500.pcapng"),
            p("d/trace.pcap1"),
            p("d/other.pcap"),
            p("e/trace.pcap2"),
        ];
        assert_eq!(
            group_rotations(&files),
            vec![
                vec![
                    p("d/ring_00001_20261201120000.pcapng"),
                    p("d/ring_00002_20261201120500.pcapng")
                ],
                vec![p("d/trace.pcap"), p("d/trace.pcap1")],
                vec![p("d/other.pcap")],
                // Another folder: another rotation.
                vec![p("e/trace.pcap2")],
            ]
        );
    }
}
