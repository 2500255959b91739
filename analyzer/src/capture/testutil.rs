//! Builders of pcap / pcapng bytes for the tests.

use std::io::Write;

/// Classic pcap writer.
pub(crate) struct PcapBuilder {
    pub buf: Vec<u8>,
    be: bool,
    modified: bool,
}

impl PcapBuilder {
    pub fn new(be: bool, nanos: bool, modified: bool, linktype: u32, snaplen: u32) -> Self {
        let magic: u32 = if modified {
            0xA1B2_CD34
        } else if nanos {
            0xA1B2_3C4D
        } else {
            0xA1B2_C3D4
        };
        let mut b = PcapBuilder {
            buf: Vec::new(),
            be,
            modified,
        };
        b.u32(magic);
        b.u16(2);
        b.u16(4);
        b.u32(0);
        b.u32(0);
        b.u32(snaplen);
        b.u32(linktype);
        b
    }

    fn u32(&mut self, v: u32) {
        let bytes = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.buf.extend_from_slice(&bytes);
    }

    fn u16(&mut self, v: u16) {
        let bytes = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.buf.extend_from_slice(&bytes);
    }

    pub fn record(&mut self, sec: u32, frac: u32, data: &[u8], orig_len: u32) -> &mut Self {
        self.u32(sec);
        self.u32(frac);
        self.u32(data.len() as u32);
        self.u32(orig_len);
        if self.modified {
            self.buf.extend_from_slice(&[0; 8]);
        }
        self.buf.extend_from_slice(data);
        self
    }
}

/// pcapng writer; each SHB switches the byte order.
#[derive(Default)]
pub(crate) struct NgBuilder {
    pub buf: Vec<u8>,
    be: bool,
}

fn pad4(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
}

impl NgBuilder {
    fn u32b(&self, v: u32) -> [u8; 4] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    fn u16b(&self, v: u16) -> [u8; 2] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    /// Encodes options (code, value) followed by opt_endofopt.
    pub fn options(&self, opts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut v = Vec::new();
        if opts.is_empty() {
            return v;
        }
        for (code, val) in opts {
            v.extend_from_slice(&self.u16b(*code));
            v.extend_from_slice(&self.u16b(val.len() as u16));
            v.extend_from_slice(val);
            pad4(&mut v);
        }
        v.extend_from_slice(&[0, 0, 0, 0]);
        v
    }

    /// A generic block with the given body (padded to 4 bytes).
    pub fn block(&mut self, btype: u32, body: &[u8]) -> &mut Self {
        let mut body = body.to_vec();
        pad4(&mut body);
        let len = (body.len() + 12) as u32;
        let t = self.u32b(btype);
        let l = self.u32b(len);
        self.buf.extend_from_slice(&t);
        self.buf.extend_from_slice(&l);
        self.buf.extend_from_slice(&body);
        self.buf.extend_from_slice(&l);
        self
    }

    pub fn shb(&mut self, be: bool) -> &mut Self {
        self.be = be;
        let mut body = Vec::new();
        body.extend_from_slice(&self.u32b(0x1A2B_3C4D));
        body.extend_from_slice(&self.u16b(1));
        body.extend_from_slice(&self.u16b(0));
        body.extend_from_slice(&[0xFF; 8]); // section length: unknown
        self.block(0x0A0D_0D0A, &body)
    }

    pub fn idb(&mut self, linktype: u16, snaplen: u32, opts: &[(u16, Vec<u8>)]) -> &mut Self {
        let mut body = Vec::new();
        body.extend_from_slice(&self.u16b(linktype));
        body.extend_from_slice(&self.u16b(0));
        body.extend_from_slice(&self.u32b(snaplen));
        body.extend_from_slice(&self.options(opts));
        self.block(1, &body)
    }

    /// if_tsoffset option value in this section's byte order.
    pub fn tsoffset(&self, s: i64) -> Vec<u8> {
        if self.be {
            s.to_be_bytes().to_vec()
        } else {
            s.to_le_bytes().to_vec()
        }
    }

    pub fn epb(&mut self, if_id: u32, ts: u64, data: &[u8], orig_len: u32) -> &mut Self {
        let mut body = Vec::new();
        body.extend_from_slice(&self.u32b(if_id));
        body.extend_from_slice(&self.u32b((ts >> 32) as u32));
        body.extend_from_slice(&self.u32b(ts as u32));
        body.extend_from_slice(&self.u32b(data.len() as u32));
        body.extend_from_slice(&self.u32b(orig_len));
        body.extend_from_slice(data);
        pad4(&mut body);
        // epb_flags option (code 2, 4 bytes): inbound.
        let opts = self.options(&[(2, self.u32b(1).to_vec())]);
        body.extend_from_slice(&opts);
        self.block(6, &body)
    }

    pub fn opb(&mut self, if_id: u16, ts: u64, data: &[u8], orig_len: u32) -> &mut Self {
        let mut body = Vec::new();
        body.extend_from_slice(&self.u16b(if_id));
        body.extend_from_slice(&self.u16b(0));
        body.extend_from_slice(&self.u32b((ts >> 32) as u32));
        body.extend_from_slice(&self.u32b(ts as u32));
        body.extend_from_slice(&self.u32b(data.len() as u32));
        body.extend_from_slice(&self.u32b(orig_len));
        body.extend_from_slice(data);
        self.block(2, &body)
    }

    pub fn spb(&mut self, data: &[u8], orig_len: u32) -> &mut Self {
        let mut body = Vec::new();
        body.extend_from_slice(&self.u32b(orig_len));
        body.extend_from_slice(data);
        self.block(3, &body)
    }
}

/// gzip-compresses `data` as one member.
pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// Deterministic pseudo-random numbers (xorshift64*) for the fuzz tests.
pub(crate) struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A reader that returns at most `chunk` bytes per read (exercises refills).
pub(crate) struct Trickle {
    pub data: Vec<u8>,
    pub pos: usize,
    pub chunk: usize,
}

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A reader that fails with an I/O error once `fail_at` bytes were returned.
pub(crate) struct Failing {
    pub data: Vec<u8>,
    pub pos: usize,
    pub fail_at: usize,
}

impl std::io::Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.fail_at {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = buf
            .len()
            .min(self.fail_at - self.pos)
            .min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
