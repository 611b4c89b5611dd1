//! Containers: offload bundles (aligned and not), compressed bundles of every
//! version with both compression methods, host objects with `.hip_fatbin`,
//! and the `HIPF` wrapper; bundle ids compared with clang-offload-bundler's
//! `-list` output committed beside each container.

mod common;

use std::io::Write;

use xfpx_amd::container::{
    self, bundle_extent, decompress_bundle, parse_bundle, CompressedBundleHeader, CompressionMethod, ContainerKind,
    HipFatBinaryWrapper, HIP_FAT_BINARY_MAGIC,
};
use xfpx_amd::{extract, BundleId, CodeObject, Error, FeatureSetting, Target};

fn bundle(name: &str) -> Vec<u8> {
    common::read(&common::fixtures().join("bundles").join(name))
}

fn listed_ids(name: &str) -> Vec<String> {
    let text = common::read_text(&common::fixtures().join("bundles").join(format!("{name}.list")));
    text.lines().filter(|l| !l.starts_with("host-")).map(str::to_string).collect()
}

fn extracted_ids(bytes: &[u8]) -> Vec<String> {
    extract(bytes).expect("extract").into_iter().map(|e| e.bundle_id.expect("bundle id")).collect()
}

#[test]
fn offload_bundle_from_clang() {
    let bytes = bundle("multi.bundle");
    assert_eq!(container::identify(&bytes), Some(ContainerKind::OffloadBundle));
    let entries = parse_bundle(&bytes).expect("entries");
    assert_eq!(entries.len(), 3);
    assert_eq!(bundle_extent(&bytes).expect("extent"), bytes.len() as u64);
    let mut ids = extracted_ids(&bytes);
    let mut listed = listed_ids("multi.bundle");
    ids.sort();
    listed.sort();
    assert_eq!(ids, listed);
    for e in extract(&bytes).expect("extract") {
        let co = CodeObject::parse(&e.bytes).expect("code object");
        let from_id = xfpx_amd::TargetId::parse(e.target_id.as_deref().expect("target id")).expect("target id");
        assert_eq!(from_id.processor, co.target.processor);
        if co.target.processor == Target::Gfx90a {
            assert_eq!(e.target_id.as_deref(), Some("gfx90a:xnack+"));
            assert_eq!(co.target.xnack, FeatureSetting::On);
        }
        assert_eq!(co.kernels.len(), 3);
        assert_eq!(e.path, vec![ContainerKind::OffloadBundle, ContainerKind::CodeObject]);
    }
}

#[test]
fn unaligned_bundle_entries() {
    let bytes = bundle("unaligned.bundle");
    let entries = parse_bundle(&bytes).expect("entries");
    assert!(
        entries.iter().any(|e| e.offset % 8 != 0),
        "expected an unaligned entry: {:?}",
        entries.iter().map(|e| e.offset).collect::<Vec<_>>()
    );
    let got = extract(&bytes).expect("extract");
    assert_eq!(got.len(), 2);
    let gfx90a = common::read(&common::fixtures().join("gfx90a/fp64.co"));
    let gfx942 = common::read(&common::fixtures().join("gfx942/fp64.co"));
    assert_eq!(got[0].bytes.as_ref(), gfx90a.as_slice());
    assert_eq!(got[1].bytes.as_ref(), gfx942.as_slice());
    assert_eq!(extracted_ids(&bytes), listed_ids("unaligned.bundle"));
}

#[test]
fn compressed_bundles_from_clang() {
    for (name, version) in [("compressed-v2.ccob", 2), ("compressed-v3.ccob", 3)] {
        let bytes = bundle(name);
        let h = CompressedBundleHeader::parse(&bytes).expect("header");
        assert_eq!(h.version, version, "{name}");
        assert_eq!(h.method, CompressionMethod::Zstd);
        assert_eq!(h.total_size, Some(bytes.len() as u64));
        assert_eq!(bundle_extent(&bytes).expect("extent"), bytes.len() as u64);
        let mut ids = extracted_ids(&bytes);
        let mut listed = listed_ids(name);
        ids.sort();
        listed.sort();
        assert_eq!(ids, listed, "{name}");
        for e in extract(&bytes).expect("extract") {
            assert_eq!(
                e.path,
                vec![ContainerKind::CompressedBundle, ContainerKind::OffloadBundle, ContainerKind::CodeObject]
            );
            let co = CodeObject::parse(&e.bytes).expect("code object");
            assert_eq!(co.kernels.len(), 3, "{name}");
        }
    }
}

/// A compressed bundle of `inner` in the layout of `version`, built here.
fn ccob(inner: &[u8], version: u16, method: CompressionMethod) -> Vec<u8> {
    let payload = match method {
        CompressionMethod::Zlib => {
            let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(inner).expect("zlib");
            enc.finish().expect("zlib")
        }
        CompressionMethod::Zstd => zstd::encode_all(inner, 3).expect("zstd"),
    };
    let code: u16 = match method {
        CompressionMethod::Zlib => 0,
        CompressionMethod::Zstd => 1,
    };
    let mut out = b"CCOB".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&code.to_le_bytes());
    let header_len = match version {
        1 => 12 + 8,
        2 => 16 + 8,
        _ => 24 + 8,
    };
    let total = (header_len + payload.len()) as u64;
    match version {
        1 => out.extend_from_slice(&(inner.len() as u32).to_le_bytes()),
        2 => {
            out.extend_from_slice(&(total as u32).to_le_bytes());
            out.extend_from_slice(&(inner.len() as u32).to_le_bytes());
        }
        _ => {
            out.extend_from_slice(&total.to_le_bytes());
            out.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        }
    }
    // Truncated hash: not checked by the reader (it is a cache key).
    out.extend_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
    out.extend_from_slice(&payload);
    assert_eq!(out.len() as u64, total);
    out
}

#[test]
fn compressed_bundles_all_versions_and_methods() {
    let inner = bundle("multi.bundle");
    let expected = extract(&inner).expect("extract");
    for version in [1u16, 2, 3] {
        for method in [CompressionMethod::Zlib, CompressionMethod::Zstd] {
            let blob = ccob(&inner, version, method);
            let h = CompressedBundleHeader::parse(&blob).expect("header");
            assert_eq!((h.version, h.method), (version, method));
            assert_eq!(h.uncompressed_size, inner.len() as u64);
            assert_eq!(decompress_bundle(&blob).expect("decompress"), inner, "v{version} {method:?}");
            let got = extract(&blob).expect("extract");
            assert_eq!(got.len(), expected.len());
            for (a, b) in got.iter().zip(&expected) {
                assert_eq!(a.bytes, b.bytes);
                assert_eq!(a.bundle_id, b.bundle_id);
            }
            if version == 1 {
                assert!(bundle_extent(&blob).is_err(), "v1 records no total size");
            } else {
                assert_eq!(bundle_extent(&blob).expect("extent"), blob.len() as u64);
            }
            // A wrong uncompressed size is an error, not a short read.
            let mut bad = blob.clone();
            let at = match version {
                1 => 8,
                2 => 12,
                _ => 16,
            };
            bad[at] ^= 1;
            assert!(matches!(decompress_bundle(&bad), Err(Error::Decompress { .. })), "v{version} {method:?}");
        }
    }
}

#[test]
fn host_object_with_hip_fatbin() {
    let bytes = bundle("host-fatbin.o");
    assert_eq!(container::identify(&bytes), Some(ContainerKind::HostElf));
    let got = extract(&bytes).expect("extract");
    let ids: Vec<_> = got.iter().map(|e| e.target_id.clone().unwrap_or_default()).collect();
    assert_eq!(ids, vec!["gfx90a".to_string(), "gfx942".to_string()]);
    for e in &got {
        assert_eq!(e.path[0], ContainerKind::HostElf);
        let co = CodeObject::parse(&e.bytes).expect("code object");
        assert_eq!(co.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), vec!["host_scale"]);
    }
    // The wrapper in .hipFatBinSegment: HIPF, version 1, pointer unresolved in a .o.
    let elf = xfpx_amd::elf::ElfFile::parse(&bytes).expect("elf");
    let seg = elf.section_by_name(".hipFatBinSegment").expect("wrapper section");
    let w = HipFatBinaryWrapper::parse(elf.section_data(seg).expect("data")).expect("wrapper");
    assert_eq!((w.magic, w.version, w.bundle), (HIP_FAT_BINARY_MAGIC, 1, 0));
}

#[test]
fn hip_fat_binary_wrapper() {
    let mut b = Vec::new();
    b.extend_from_slice(b"FPIH");
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&0x7f00_1234_5000u64.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    let w = HipFatBinaryWrapper::parse(&b).expect("wrapper");
    assert_eq!(w.magic, 0x4849_5046);
    assert_eq!(w.bundle, 0x7f00_1234_5000);
    b[0] = b'X';
    assert!(HipFatBinaryWrapper::parse(&b).is_err());
    assert!(HipFatBinaryWrapper::parse(&b[..20]).is_err());
}

#[test]
fn bundle_ids() {
    let id = BundleId::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+").expect("id");
    assert_eq!(
        (id.kind.as_str(), id.triple.as_str(), id.target_id.as_str()),
        ("hipv4", "amdgcn-amd-amdhsa", "gfx90a:xnack+")
    );
    let id = BundleId::parse("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-").expect("id");
    assert_eq!(id.target_id, "gfx942:sramecc+:xnack-");
    let old = BundleId::parse("hip-amdgcn-amd-amdhsa-gfx906").expect("old-style id");
    assert_eq!(
        (old.kind.as_str(), old.triple.as_str(), old.target_id.as_str()),
        ("hip", "amdgcn-amd-amdhsa", "gfx906")
    );
    let host = BundleId::parse("host-x86_64-unknown-linux--").expect("host");
    assert_eq!((host.triple.as_str(), host.target_id.as_str()), ("x86_64-unknown-linux", ""));
    assert!(id.is_amdgpu() && !id.is_host());
    let host = BundleId::parse("host-x86_64-unknown-linux-gnu-").expect("host");
    assert!(host.is_host());
    assert_eq!(host.target_id, "");
    assert!(BundleId::parse("garbage").is_err());
    assert!(BundleId::parse("hip-amdgcn").is_err());
}

#[test]
fn plain_code_object_and_unknown_input() {
    let co = common::read(&common::fixtures().join("gfx942/fp32.co"));
    let got = extract(&co).expect("extract");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].bundle_id, None);
    assert_eq!(extract(b"hello world").expect_err("not a container"), Error::UnknownFormat);
    assert!(extract(b"").is_err());
}

#[test]
fn truncated_containers_are_errors() {
    for name in [
        "multi.bundle",
        "unaligned.bundle",
        "compressed-v2.ccob",
        "compressed-v3.ccob",
        "host-fatbin.o",
        "host-fatbin.exe",
        "libhost-fatbin.so",
    ] {
        let bytes = bundle(name);
        for cut in [0, 4, 24, 31, 33, 60, 100, bytes.len() / 2, bytes.len() - 1] {
            let r = extract(&bytes[..cut.min(bytes.len())]);
            assert!(r.is_err(), "{name} cut at {cut} should fail");
            let msg = r.expect_err("truncated").to_string();
            assert!(!msg.contains('\n') && !msg.is_empty(), "{msg}");
        }
    }
}

#[test]
fn linked_host_binaries() {
    let object_bytes = bundle("host-fatbin.o");
    let object = extract(&object_bytes).expect("object");
    for (name, resolved) in [("host-fatbin.exe", true), ("libhost-fatbin.so", false)] {
        let bytes = bundle(name);
        assert_eq!(container::identify(&bytes), Some(ContainerKind::HostElf));
        let elf = xfpx_amd::elf::ElfFile::parse(&bytes).expect("elf");
        let fatbin = elf.section_by_name(".hip_fatbin").expect(".hip_fatbin");
        let seg = elf.section_by_name(".hipFatBinSegment").expect("wrapper section");
        let w = HipFatBinaryWrapper::parse(elf.section_data(seg).expect("data")).expect("wrapper");
        // Non-PIE: the pointer is the section's address; shared: left to a relocation.
        assert_eq!(w.bundle == fatbin.addr, resolved, "{name}: bundle pointer 0x{:x}", w.bundle);
        assert_eq!(w.bundle == 0, !resolved, "{name}");
        let bundles = container::host_fat_binaries(&elf).expect("bundles");
        assert_eq!(bundles.len(), 1);
        assert_eq!(bundles[0].as_ptr(), elf.section_data(fatbin).expect("data").as_ptr());
        let got = extract(&bytes).expect("extract");
        assert_eq!(got.len(), object.len());
        for (a, b) in got.iter().zip(&object) {
            assert_eq!(a.bytes, b.bytes, "{name}");
            assert_eq!(a.bundle_id, b.bundle_id);
        }
    }
}
