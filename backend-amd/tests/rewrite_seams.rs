//! The rewrite's seams on every corpus code object: units taken from the
//! one pass over `.text` are what decoding each alone gives; a prepared
//! rewrite knows its table's size before the address is given; a patchable
//! object records where the address goes, and placing the table there
//! gives the bytes emitting with that address gives.

mod common;

use xfpx_amd::rewrite::units::TextCode;
use xfpx_amd::rewrite::{self, Mode, RewriteOptions, RewriteRecord, TableAddress};
use xfpx_amd::CodeObject;

#[test]
fn units_from_the_text_pass_are_what_decoding_each_alone_gives() {
    let mut sliced = 0usize;
    for (target, name, path) in common::code_objects() {
        let bytes = common::read(&path);
        let co = CodeObject::parse(&bytes).expect("fixture parses");
        let processor = co.target.processor;
        let text = TextCode::decode(&co, processor);
        for k in &co.kernels {
            let got = text.unit(&co, processor, &k.code, k.preload_header_bytes).expect("decodes");
            let code = co.kernel_code(k).expect("kernel code");
            let skip = k.preload_header_bytes as usize;
            let alone: Vec<(u64, String)> =
                xfpx_amd_isa::disassemble(processor, &code[skip..], k.code.start + skip as u64)
                    .map(|(a, r)| (a, r.expect("decodes").to_string()))
                    .collect();
            let got: Vec<(u64, String)> = got.iter().map(|d| (d.addr, d.insn.to_string())).collect();
            assert_eq!(got, alone, "{target}/{name} {}", k.name);
            sliced += 1;
        }
    }
    assert!(sliced > 100, "only {sliced} kernels");
}

#[test]
fn a_patchable_rewrite_places_its_table_where_it_is_told() {
    let mut checked = 0usize;
    for (target, name, path) in common::code_objects() {
        let original = common::read(&path);
        for mode in [Mode::Detect, Mode::Screen] {
            let address = 0x1_2345_0000u64;
            let known = rewrite::rewrite(
                &original,
                &RewriteOptions { mode, table: TableAddress::Known(address), ..Default::default() },
            )
            .expect("rewrites");
            let opts = RewriteOptions { mode, table: TableAddress::Patchable, ..Default::default() };
            let prepared = rewrite::prepare(&original, &opts).expect("prepares");
            // The table's size is known before its address, and is the one a known address gives.
            assert_eq!(prepared.table_bytes(), known.table.bytes(), "{target}/{name} {mode:?}");
            let at_zero = rewrite::prepare(&original, &opts).expect("prepares").emit(0).expect("emits");
            let emitted = prepared.emit(address).expect("emits");
            assert_eq!(emitted.table_address, address);
            assert_eq!(emitted.table, known.table);
            let record = RewriteRecord::read(&emitted.bytes).expect("reads").expect("a patchable object has a record");
            assert_eq!(record.mode, mode);
            assert_eq!(record.table, known.table);
            assert_eq!(record.sites.len(), emitted.sites.len());
            // Two literals per table update, each written with its half.
            assert_eq!(record.table_address_literals.len() % 2, 0);
            assert_eq!(record.table_address_literals.is_empty(), known.table.slots.is_empty());
            assert_eq!(record.place_table(&at_zero.bytes, address).expect("places"), emitted.bytes);
            // A listing line loads each half.
            let lines: Vec<&str> =
                emitted.kernels.iter().flat_map(|k| k.appended.iter().map(|l| l.text.as_str())).collect();
            if !record.table_address_literals.is_empty() {
                assert!(lines.iter().any(|l| l.starts_with("s_mov_b32") && l.ends_with("0x23450000")), "{lines:?}");
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} rewrites");
}

#[test]
fn code_placed_for_a_known_address_is_emitted_for_that_address_only() {
    let (_, _, path) = common::code_objects().into_iter().next().expect("a fixture");
    let original = common::read(&path);
    let opts = RewriteOptions { table: TableAddress::Known(0x1000), ..Default::default() };
    let e = rewrite::prepare(&original, &opts).expect("prepares").emit(0x2000).expect_err("another address");
    assert!(e.to_string().contains("placed for a table at 0x1000"), "{e}");
    let out = rewrite::prepare(&original, &opts).expect("prepares").emit(0x1000).expect("emits");
    assert!(RewriteRecord::read(&out.bytes).expect("reads").is_none(), "only patchable objects carry a record");
}
