//! Fuzz target: container extraction (bundles, compressed bundles, host ELF, HIPF).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = xfpx_amd::container::bundle_extent(data);
    let _ = xfpx_amd::container::HipFatBinaryWrapper::parse(data);
    match xfpx_amd::extract(data) {
        Ok(list) => {
            for co in list {
                if let Err(e) = xfpx_amd::CodeObject::parse(&co.bytes) {
                    assert!(!e.to_string().contains('\n'));
                }
            }
        }
        Err(e) => assert!(!e.to_string().contains('\n')),
    }
});
