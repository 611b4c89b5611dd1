//! The C boundary: the header types (`generated` from the HSA headers,
//! `types` laid out by hand), the API tables with the exported symbols
//! (`table`), the entry points behind them (`entry`), the loader extension,
//! intercept queues, tool loading, and host memory (`host`). All `unsafe`
//! of the runtime is in this module.

#![allow(non_camel_case_types, non_snake_case)]

pub mod entry;
pub mod generated;
pub mod host;
pub mod intercept;
pub mod loader;
pub mod out;
pub mod table;
pub mod tools;
pub mod types;
