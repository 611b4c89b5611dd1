//! The fixture corpus read back and compared with the reference tools'
//! output committed beside it: descriptors against llvm-objdump's
//! `.amdhsa_*` rendering, kernel entries against its symbol labels, the
//! metadata note against llvm-readelf's YAML, and the section/segment layout
//! against llvm-readelf.

mod common;

use std::collections::BTreeMap;

use xfpx_amd::{render_amdhsa, CodeObject, Target};

#[test]
fn descriptors_match_llvm_objdump() {
    let mut compared = 0;
    for (target, name, path) in common::code_objects() {
        let bytes = common::read(&path);
        let co = CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{target}/{name}: {e}"));
        assert_eq!(co.target.processor.name(), target, "{target}/{name}: processor");
        let golden = common::read_text(&path.with_extension("descriptors"));
        let blocks = common::amdhsa_blocks(&golden);
        assert_eq!(blocks.len(), co.kernels.len(), "{target}/{name}: kernel count");
        for (kernel, expected) in blocks {
            let k = co.kernel(&kernel).unwrap_or_else(|| panic!("{target}/{name}: no kernel {kernel}"));
            let ours = render_amdhsa(&kernel, &k.descriptor, co.target.processor, co.version);
            assert_eq!(ours, expected, "{target}/{name}: descriptor of {kernel}");
            let decoded = k.descriptor.decode(co.target.processor).unwrap_or_else(|e| panic!("{kernel}: {e}"));
            // Round trip through bytes.
            let again = xfpx_amd::KernelDescriptor::parse(&k.descriptor.to_bytes()).expect("reparse");
            assert_eq!(again, k.descriptor);
            assert_eq!(decoded.processor, co.target.processor);
            compared += 1;
        }
    }
    println!("compared {compared} kernel descriptors with llvm-objdump");
    assert!(compared >= 120);
}

/// `<name>:` labels and their addresses in an llvm-objdump listing.
fn objdump_labels(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((addr, rest)) = line.split_once(" <") else { continue };
        let Some(name) = rest.strip_suffix(">:") else { continue };
        if let Ok(a) = u64::from_str_radix(addr.trim(), 16) {
            out.insert(name.to_string(), a);
        }
    }
    out
}

#[test]
fn kernel_entries_match_llvm_objdump_symbols() {
    for (target, name, path) in common::code_objects() {
        let bytes = common::read(&path);
        let co = CodeObject::parse(&bytes).expect("parse");
        let labels = objdump_labels(&common::read_text(&path.with_extension("objdump")));
        // Every function llvm-objdump lists is a function of ours, at the same address.
        let ours: BTreeMap<String, u64> = co.functions.iter().map(|f| (f.name.clone(), f.code.start)).collect();
        assert_eq!(ours, labels, "{target}/{name}: functions");
        assert_eq!(co.functions.iter().filter(|f| f.is_kernel).count(), co.kernels.len());
        for k in &co.kernels {
            assert_eq!(labels.get(&k.name), Some(&k.entry), "{target}/{name}: entry of {}", k.name);
            assert!(k.code.end > k.code.start && k.code.start == k.entry);
            // Entries are 256-byte aligned and code ranges do not overlap other kernels.
            assert_eq!(k.entry % 256, 0, "{}", k.name);
            for other in co.kernels.iter().filter(|o| o.name != k.name) {
                assert!(
                    other.entry >= k.code.end || other.code.end <= k.code.start,
                    "{} overlaps {}",
                    k.name,
                    other.name
                );
            }
            let code = co.kernel_code(k).expect("code bytes");
            assert_eq!(code.len() as u64, k.code.end - k.code.start);
            let decoded = k.descriptor.decode(co.target.processor).expect("decode");
            // The preload header, where present, is what llvm-objdump shows:
            // s_trap 2 and 63 s_nop 0 (clang-19 on gfx90a/gfx942; none on gfx950).
            let listing = common::read_text(&path.with_extension("objdump"));
            let body = listing.split(&format!("<{}>:\n", k.name)).nth(1).expect("listing");
            let first: Vec<&str> =
                body.lines().take(64).map(|l| l.trim_start().split("  ").next().unwrap_or("")).collect();
            let has_header = first[0] == "s_trap 2" && first[1..].iter().all(|l| *l == "s_nop 0");
            assert_eq!(k.preload_header_bytes > 0, has_header, "{target}/{name}: {} preload header", k.name);
            if has_header {
                assert!(decoded.kernarg_preload_length > 0);
                assert!(target == "gfx90a" || target == "gfx942");
            }
        }
    }
}

/// Kernel-level scalar keys of each kernel in llvm-readelf's YAML rendering.
fn yaml_kernels(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut out: Vec<BTreeMap<String, String>> = Vec::new();
    let mut in_kernels = false;
    for line in text.lines() {
        if line.starts_with("amdhsa.kernels:") {
            in_kernels = true;
            continue;
        }
        if in_kernels && !line.starts_with(' ') {
            in_kernels = false;
        }
        if !in_kernels {
            continue;
        }
        let (indent_ok, body) = if let Some(b) = line.strip_prefix("  - ") {
            out.push(BTreeMap::new());
            (true, b)
        } else if let Some(b) = line.strip_prefix("    ") {
            (!b.starts_with(' ') && !b.starts_with('-'), b)
        } else {
            (false, line)
        };
        if !indent_ok {
            continue;
        }
        if let (Some(k), Some((key, value))) = (out.last_mut(), body.split_once(':')) {
            k.insert(key.trim().to_string(), value.trim().to_string());
        }
    }
    out
}

#[test]
fn metadata_matches_llvm_readelf_notes() {
    let mut kernels = 0;
    for (target, name, path) in common::code_objects() {
        let bytes = common::read(&path);
        let co = CodeObject::parse(&bytes).expect("parse");
        let md = co.metadata.as_ref().unwrap_or_else(|| panic!("{target}/{name}: no metadata"));
        let notes = common::read_text(&path.with_extension("notes"));
        let golden = yaml_kernels(&notes);
        assert_eq!(golden.len(), md.kernels.len(), "{target}/{name}");
        assert!(notes.contains(&format!("amdhsa.target:   {}", md.target.as_deref().unwrap_or("?"))));
        for g in golden {
            let k = md.kernels.iter().find(|k| Some(&k.name) == g.get(".name")).expect("kernel in metadata");
            let check = |key: &str, ours: u64| {
                assert_eq!(
                    g.get(key).map(String::as_str),
                    Some(ours.to_string().as_str()),
                    "{target}/{name} {} {key}",
                    k.name
                );
            };
            check(".sgpr_count", k.sgpr_count);
            check(".vgpr_count", k.vgpr_count);
            check(".kernarg_segment_size", k.kernarg_segment_size);
            check(".kernarg_segment_align", k.kernarg_segment_align);
            check(".group_segment_fixed_size", k.group_segment_fixed_size);
            check(".private_segment_fixed_size", k.private_segment_fixed_size);
            check(".wavefront_size", k.wavefront_size);
            check(".max_flat_workgroup_size", k.max_flat_workgroup_size);
            if let Some(a) = k.agpr_count {
                check(".agpr_count", a);
            }
            assert_eq!(g.get(".symbol"), Some(&k.symbol));
            // The descriptor and the note agree on the segment sizes.
            let kd = &co.kernel(&k.name).expect("kernel").descriptor;
            assert_eq!(u64::from(kd.group_segment_fixed_size), k.group_segment_fixed_size);
            assert_eq!(u64::from(kd.kernarg_size), k.kernarg_segment_size);
            kernels += 1;
        }
        // Argument offsets and sizes, in order, match the YAML.
        let mut arg_offsets = Vec::new();
        for line in notes.lines() {
            let t = line.trim_start();
            if let Some(v) = t.strip_prefix("- ").unwrap_or(t).strip_prefix(".offset:") {
                arg_offsets.push(v.trim().parse::<u64>().expect("offset"));
            }
        }
        let ours: Vec<u64> = md.kernels.iter().flat_map(|k| k.args.iter().map(|a| a.offset)).collect();
        assert_eq!(ours, arg_offsets, "{target}/{name}: argument offsets");
    }
    assert!(kernels >= 120);
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex")
}

#[test]
fn layout_matches_llvm_readelf() {
    let mut slack_seen = BTreeMap::new();
    for (target, name, path) in common::code_objects() {
        let bytes = common::read(&path);
        let co = CodeObject::parse(&bytes).expect("parse");
        let layout = common::read_text(&path.with_extension("layout"));
        let mut sections = 0;
        let mut loads = Vec::new();
        for line in layout.lines() {
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix('[') {
                let Some((idx, rest)) = rest.split_once(']') else { continue };
                let Ok(idx) = idx.trim().parse::<usize>() else { continue };
                let f: Vec<&str> = rest.split_whitespace().collect();
                if idx == 0 || f.len() < 5 {
                    continue;
                }
                let s = &co.elf.sections[idx];
                assert_eq!(
                    (s.name.as_str(), s.addr, s.offset, s.size),
                    (f[0], hex(f[2]), hex(f[3]), hex(f[4])),
                    "{target}/{name}"
                );
                sections += 1;
            } else if let Some(rest) = t.strip_prefix("LOAD ") {
                let f: Vec<&str> = rest.split_whitespace().collect();
                loads.push((hex(f[0]), hex(f[1]), hex(f[3]), hex(f[4])));
            }
        }
        assert_eq!(sections + 1, co.elf.sections.len(), "{target}/{name}: sections");
        let ours: Vec<_> =
            co.elf.segments.iter().filter(|s| s.p_type == 1).map(|s| (s.offset, s.vaddr, s.filesz, s.memsz)).collect();
        assert_eq!(ours, loads, "{target}/{name}: PT_LOAD segments");
        let text = co.text.as_ref().expect(".text layout");
        let next = loads.iter().map(|l| l.1).filter(|&v| v >= text.text.end).min();
        assert_eq!(text.slack, next.map(|n| n - text.text.end));
        slack_seen.insert(format!("{target}/{name}"), text.slack);
    }
    assert_eq!(slack_seen["gfx90a/noslack"], Some(0));
    assert_eq!(slack_seen["gfx942/noslack"], Some(0));
    assert_eq!(slack_seen["gfx90a/fp32"], Some(0x1000));
}

#[test]
fn targets_and_versions() {
    for (target, name, path) in common::code_objects() {
        let bytes = common::read(&path);
        let co = CodeObject::parse(&bytes).expect("parse");
        let expected_version = if target == "gfx950" {
            6
        } else if name == "cov4" {
            4
        } else {
            5
        };
        assert_eq!(co.version, expected_version, "{target}/{name}");
        assert_eq!(Target::from_name(&target), Some(co.target.processor));
        let md_target = co.metadata.as_ref().and_then(|m| m.target.clone()).expect("note target");
        assert_eq!(md_target, format!("amdgcn-amd-amdhsa--{}", co.target), "{target}/{name}");
    }
}

#[test]
fn register_encoding_reproduces_llvm_granules() {
    // Re-encoding the metadata's register counts gives the descriptor LLVM wrote.
    let mut checked = 0;
    for (target, name, path) in common::code_objects() {
        let bytes = common::read(&path);
        let co = CodeObject::parse(&bytes).expect("parse");
        let md = co.metadata.as_ref().expect("metadata");
        for k in &co.kernels {
            let m = md.kernels.iter().find(|m| m.name == k.name).expect("kernel metadata");
            let mut kd = k.descriptor;
            kd.compute_pgm_rsrc1 &= !0x3ff;
            kd.compute_pgm_rsrc3 &= !0x3f;
            let request = xfpx_amd::descriptor::RegisterRequest {
                vgprs: m.vgpr_count as u32,
                agprs: m.agpr_count.unwrap_or(0) as u32,
                sgprs: m.sgpr_count as u32,
            };
            kd.set_register_allocation(co.target.processor, request).expect("encode");
            assert_eq!(kd.to_bytes(), k.descriptor.to_bytes(), "{target}/{name} {}: {request:?}", k.name);
            checked += 1;
        }
    }
    assert!(checked >= 120);
}
