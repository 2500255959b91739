//! Reading an upload while it is written: the upload handler writes the file and says how far
//! (`Tail::advance`); a `TailReader` on another handle of the same file reads up to there and
//! waits for more until the upload is complete (`finish`) or abandoned (`abort`, or the `Tail`
//! dropped without `finish`: the reader then fails, which ends the pass).

use std::fs::File;
use std::io::{self, Read};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

#[derive(Debug, Default)]
struct State {
    /// Bytes of the file written and flushed.
    written: u64,
    done: bool,
    aborted: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    more: Condvar,
}

/// The writing side (the upload handler).
#[derive(Debug)]
pub struct Tail {
    shared: Arc<Shared>,
    finished: bool,
}

/// The reading side (the analysis), a `Read` over the file as far as it is written.
#[derive(Debug)]
pub struct TailReader {
    file: File,
    pos: u64,
    shared: Arc<Shared>,
}

/// A writer/reader pair over `file` (a second handle of the file being written).
pub fn tail(file: File) -> (Tail, TailReader) {
    let shared = Arc::new(Shared::default());
    (
        Tail {
            shared: shared.clone(),
            finished: false,
        },
        TailReader {
            file,
            pos: 0,
            shared,
        },
    )
}

impl Tail {
    fn update(&self, f: impl FnOnce(&mut State)) {
        let mut s = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s);
        self.shared.more.notify_all();
    }

    /// `n` more bytes are in the file.
    pub fn advance(&self, n: u64) {
        self.update(|s| s.written += n);
    }

    /// The file is complete: the reader reads to its end.
    pub fn finish(mut self) {
        self.finished = true;
        self.update(|s| s.done = true);
    }

    /// The upload is abandoned: the reader fails at once.
    pub fn abort(mut self) {
        self.finished = true;
        self.update(|s| s.aborted = true);
    }
}

impl Drop for Tail {
    fn drop(&mut self) {
        if !self.finished {
            self.update(|s| s.aborted = true);
        }
    }
}

impl Read for TailReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let avail = {
            let mut s = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if s.aborted {
                    return Err(io::Error::other("the upload was abandoned"));
                }
                if s.written > self.pos || s.done {
                    break s.written - self.pos;
                }
                // The timeout only bounds a wait whose wake-up was lost; writes notify.
                s = self
                    .shared
                    .more
                    .wait_timeout(s, Duration::from_millis(200))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        };
        if avail == 0 {
            return Ok(0);
        }
        let want = buf.len().min(avail.min(usize::MAX as u64) as usize);
        let n = self.file.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the upload file is shorter than written",
            ));
        }
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_what_is_written_then_ends() {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        let (t, mut r) = tail(tmp.reopen().unwrap());
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            r.read_to_end(&mut out).map(|_| out)
        });
        for i in 0..50u8 {
            tmp.write_all(&[i; 1000]).unwrap();
            tmp.flush().unwrap();
            t.advance(1000);
        }
        t.finish();
        let out = reader.join().unwrap().unwrap();
        assert_eq!(out.len(), 50_000);
        assert!(out
            .chunks(1000)
            .enumerate()
            .all(|(i, c)| c.iter().all(|&b| b == i as u8)));
    }

    #[test]
    fn abandoned_upload_fails_the_reader() {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        let (t, mut r) = tail(tmp.reopen().unwrap());
        tmp.write_all(b"abc").unwrap();
        t.advance(3);
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            r.read_to_end(&mut out)
        });
        drop(t);
        assert!(reader.join().unwrap().is_err());
    }
}
