//! Fuzz target: container extraction (bundles, compressed bundles, host ELF, HIPF).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = xfpx_amd::container::bundle_extent(data);
    let _ = xfpx_amd::container::HipFatBinaryWrapper::parse(data);
    if let Ok(list) = xfpx_amd::extract(data) {
        for co in list {
            let _ = xfpx_amd::CodeObject::parse(&co.bytes);
        }
    }
});
