//! Fuzz target: kernel descriptor parse, per-target decode, rendering and re-encoding.
#![no_main]
use libfuzzer_sys::fuzz_target;
use xfpx_amd::descriptor::{render_amdhsa, KernelDescriptor};
use xfpx_amd::target::PROCESSORS;

fuzz_target!(|data: &[u8]| {
    if let Ok(kd) = KernelDescriptor::parse(data) {
        assert_eq!(&kd.to_bytes()[..], &data[..64]);
        for p in PROCESSORS {
            let _ = kd.decode(p.target);
            for version in [4, 5, 6] {
                let _ = render_amdhsa("k", &kd, p.target, version);
            }
        }
    }
});
