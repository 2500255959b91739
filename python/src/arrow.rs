//! A polars DataFrame handed to Python as Arrow: `ArrowTable` implements the Arrow PyCapsule
//! interface (`__arrow_c_stream__`, `__arrow_c_schema__`), exporting the frame's own buffers
//! through polars-arrow's C Data / C Stream interface (no copy, no polars feature of its own):
//! `polars.DataFrame(t)`, `pyarrow.table(t)` and DuckDB read it as it is.

use std::ffi::CStr;

use polars::prelude::{CompatLevel, DataFrame, PolarsResult};
use polars_arrow::array::{Array, StructArray};
use polars_arrow::datatypes::{ArrowDataType, Field};
use polars_arrow::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

const STREAM: &CStr = c"arrow_array_stream";
const SCHEMA: &CStr = c"arrow_schema";

/// One table of an analysis as Arrow record batches (each a struct array of the columns).
#[pyclass(frozen, module = "sctp_analyzer._native")]
pub struct ArrowTable {
    name: String,
    rows: usize,
    /// The struct field of one record batch (its children are the columns).
    field: Field,
    batches: Vec<Box<dyn Array>>,
}

impl ArrowTable {
    /// The record batches of `df` (aligned first), in the newest Arrow layout polars writes
    /// (string and binary views): what Python polars holds itself.
    pub fn new(name: &str, mut df: DataFrame) -> PolarsResult<ArrowTable> {
        df.align_chunks();
        let fields: Vec<Field> = df
            .columns()
            .iter()
            .map(|c| c.field().to_arrow(CompatLevel::newest()))
            .collect();
        let dtype = ArrowDataType::Struct(fields);
        // A struct array needs at least one child: a table without columns has no batch.
        let batches = if df.width() == 0 {
            Vec::new()
        } else {
            df.iter_chunks(CompatLevel::newest(), false)
                .map(|b| {
                    let len = b.height();
                    StructArray::try_new(dtype.clone(), len, b.into_arrays(), None)
                        .map(|a| a.boxed())
                })
                .collect::<PolarsResult<_>>()?
        };
        Ok(ArrowTable {
            name: name.to_string(),
            rows: df.height(),
            field: Field::new(name.into(), dtype, false),
            batches,
        })
    }
}

#[pymethods]
impl ArrowTable {
    /// The table's name (`associations`, `paths`, ...).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Number of rows.
    fn __len__(&self) -> usize {
        self.rows
    }

    fn __repr__(&self) -> String {
        format!("<ArrowTable {} ({} rows)>", self.name, self.rows)
    }

    /// The table as an Arrow C stream (a PyCapsule named `arrow_array_stream`); the requested
    /// schema is not honoured (the Arrow PyCapsule interface allows it): the columns come as
    /// they are.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        // Cloning an array shares its buffers.
        let batches = self.batches.clone().into_iter().map(Ok);
        let stream = ffi::export_iterator(Box::new(batches), self.field.clone());
        // The capsule owns the stream: dropping it releases the stream unless a consumer moved
        // it out (and cleared its `release`), as the interface says.
        PyCapsule::new_with_value(py, stream, STREAM)
    }

    /// The table's schema as an Arrow C schema (a PyCapsule named `arrow_schema`).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        PyCapsule::new_with_value(py, ffi::export_field_to_c(&self.field), SCHEMA)
    }
}
