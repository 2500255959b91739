//! What a pass hands on as it goes, besides the reports of `analyze::Ended`: its progress
//! (`PassProgress`), and for a table pass (`analyze::analyze_reader_rows`) every association
//! that ended with its rows, retired TCP connections and chunk rows in batches (`RowSink`), so
//! that tables can be written while the pass runs (`frames::TableStream`).

use crate::assoc::Association;
use crate::chunk_rows::ChunkRows;
use crate::packet::TimeBase;

/// How far a pass is, for progress displays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassProgress {
    /// Bytes of the input consumed (compressed bytes for gzip).
    pub bytes: u64,
    /// SCTP and TCP packets analysed.
    pub packets: u64,
    /// Associations met (open or ended).
    pub associations: u64,
}

/// Receives what a table pass (`analyze_reader_rows`) produces as it goes, so that tables can
/// be written while the pass runs: every association that ended, whole with its rows (its
/// inference finished as for the report), each retired TCP connection, and the chunk rows in
/// batches in capture order. What is still open at the end is in the returned analysis.
pub trait RowSink {
    /// An association that ended, once its late packets had their time (300 s of capture
    /// time, or less when 8 ended ones wait), as the JSON stream hands it on.
    fn association(&mut self, time: TimeBase, assoc: Box<Association>);
    /// A retired TCP connection (only when `keep_rows` is off: with rows none is retired).
    fn tcp_flow(&mut self, time: TimeBase, flow: Box<crate::tcp::TcpFlow>);
    /// Chunk rows (`keep_chunks`) in capture order, handed on once `CHUNK_BATCH` (plus the rest
    /// of a reading batch) wait; the last ones are in the returned analysis.
    fn chunks(&mut self, time: TimeBase, rows: ChunkRows);
    fn progress(&mut self, p: PassProgress);
}

/// Chunk rows handed to a `RowSink` at once.
pub const CHUNK_BATCH: usize = 1 << 16;
