//! Byte sources under the capture reader: a counter of raw input bytes (for progress), gzip
//! detection, and a "prefix" reader that serves the already-inspected start of the stream and
//! then records the first read error (with its offset) that pcap-parser would otherwise reduce to
//! a bare `ReadError`.

use std::io::{self, BufRead, BufReader, ErrorKind, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// gzip member magic (RFC 1952 2.3.1: ID1 = 0x1f, ID2 = 0x8b).
pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// State shared between the reader chain (moved into pcap-parser) and the `CaptureReader`.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Raw (compressed, if gzip) bytes read from the input so far.
    pub input_bytes: AtomicU64,
    /// First read error after the prefix: (decompressed stream offset, message).
    pub error: Mutex<Option<(u64, String)>>,
}

/// Counts the bytes read from the underlying input.
pub(crate) struct Counting<R> {
    inner: R,
    shared: Arc<Shared>,
}

impl<R: Read> Counting<R> {
    pub fn new(inner: R, shared: Arc<Shared>) -> Self {
        Counting { inner, shared }
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.shared
            .input_bytes
            .fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Wraps the raw input: buffers it, sniffs the gzip magic and, if present, puts a
/// multi-member gzip decoder (RFC 1952 2.2: a file may hold several members) in front.
/// Returns the decoded stream and whether it was gzip.
pub(crate) fn open_stream(
    raw: Box<dyn Read + Send>,
    shared: &Arc<Shared>,
) -> io::Result<(Box<dyn Read + Send>, bool)> {
    let mut buffered = BufReader::with_capacity(64 * 1024, Counting::new(raw, shared.clone()));
    let head = loop {
        match buffered.fill_buf() {
            Ok(b) => break b,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    // fill_buf may return fewer than 2 bytes only at the end of a tiny input: then it is no gzip.
    if head.len() >= 2 && head[..2] == GZIP_MAGIC {
        Ok((
            Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
            true,
        ))
    } else {
        Ok((Box::new(buffered), false))
    }
}

/// Reads until `buf` holds `want` bytes or the stream ends. Returns the read error, if any
/// (bytes read before it stay in `buf`).
pub(crate) fn fill_to(r: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> io::Result<()> {
    let mut chunk = [0u8; 16 * 1024];
    while buf.len() < want {
        let n = (want - buf.len()).min(chunk.len());
        match r.read(&mut chunk[..n]) {
            Ok(0) => return Ok(()),
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Serves `prefix` first, then the rest of the stream. Read errors of the rest are stored in
/// `shared.error` with the stream offset where they happened (pcap-parser keeps only
/// "ReadError").
pub(crate) struct Prefixed {
    prefix: Vec<u8>,
    pos: usize,
    inner: Box<dyn Read + Send>,
    /// Stream offset of the next byte `inner` returns.
    offset: u64,
    shared: Arc<Shared>,
}

impl Prefixed {
    pub fn new(prefix: Vec<u8>, inner: Box<dyn Read + Send>, shared: Arc<Shared>) -> Self {
        let offset = prefix.len() as u64;
        Prefixed {
            prefix,
            pos: 0,
            inner,
            offset,
            shared,
        }
    }
}

impl Read for Prefixed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos < self.prefix.len() {
            let n = (self.prefix.len() - self.pos).min(buf.len());
            buf[..n].copy_from_slice(&self.prefix[self.pos..self.pos + n]);
            self.pos += n;
            if self.pos == self.prefix.len() {
                // Free the prefix: it is never read again.
                self.prefix = Vec::new();
                self.pos = 0;
            }
            return Ok(n);
        }
        loop {
            match self.inner.read(buf) {
                Ok(n) => {
                    self.offset += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    if let Ok(mut slot) = self.shared.error.lock() {
                        slot.get_or_insert((self.offset, e.to_string()));
                    }
                    return Err(e);
                }
            }
        }
    }
}
