//! The dashboard's integration tests (router, pages, API, faults), one module per subject,
//! linked into one test binary: each binary links polars, so one instead of eleven saves CI
//! gigabytes of disk and minutes of linking. `cargo test --workspace --test pages routes::` runs
//! one module.

mod pages_common;

mod assoc_table_pages;
mod definitions;
mod faults;
mod help_pages;
mod hol_pages;
mod lifecycle_pages;
mod linux_failover_pages;
mod routes;
mod scale_pages;
mod streams_pages;
mod studies_pages;
