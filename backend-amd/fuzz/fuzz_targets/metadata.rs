//! Fuzz target: the MessagePack metadata note.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = xfpx_amd::metadata::parse(data);
});
