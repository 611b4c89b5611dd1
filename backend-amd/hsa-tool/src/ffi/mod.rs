//! Everything unsafe of the tool, fenced here: the C entry points the
//! runtime calls ([`entries`]: `OnLoad`, `OnUnload`, the replaced table
//! entries, the queue interceptor), the API table read and written through
//! raw pointers ([`api`]), the calls into the runtime through the entries
//! saved at `OnLoad` ([`runtime`]) and the watch over instrumented
//! launches' completion signals ([`completion`]). Every entry catches
//! panics and falls back to what the runtime would have done.
#![allow(unsafe_code)]

pub mod api;
pub mod completion;
pub mod entries;
pub mod runtime;
