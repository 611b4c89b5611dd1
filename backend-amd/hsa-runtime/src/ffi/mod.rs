//! The C boundary: the header types (`generated` from the HSA headers,
//! `types` laid out by hand), the API tables with the exported symbols
//! (`table`), and the entry points behind them (`entry`). All `unsafe` of
//! the runtime is in this module.

#![allow(non_camel_case_types, non_snake_case)]

pub mod entry;
pub mod generated;
pub mod table;
pub mod types;
