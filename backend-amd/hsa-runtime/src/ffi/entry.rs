//! The runtime's entry for every table slot: what it implements, and for
//! the rest the generated `unsupported` entries.

pub use super::generated::unsupported::*;
