//! Fuzz target: the whole `dump` path, text and JSON.
#![no_main]
use libfuzzer_sys::fuzz_target;
use xfpx_amd::{dump, OutputFormat, DumpOptions};

fuzz_target!(|data: &[u8]| {
    for format in [OutputFormat::Text, OutputFormat::Json] {
        if let Err(e) = dump(data, &DumpOptions { kernel: None, format }) {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
});
