use super::*;
use crate::sass::{build_kernel, parse_listing};
use xfpx_common::fault::FaultFlags;

const LISTING: &str = "\tFunction : k\n\
    /*0000*/  S2R R0, SR_TID.X ;\n\
    /*0010*/  IADD3 R1, R0, 0x4, RZ ;\n\
    /*0020*/  LDS R2, [R1+0x10] ;\n\
    /*0030*/  FMUL R3, R2, c[0x0][0x160] ;\n\
    /*0040*/  ISETP.GT.AND P0, PT, R0, 0x3, PT ;\n\
    /*0050*/  @!P0 FADD R4, R3, R3 ;\n\
    /*0060*/  STS [R1], R4 ;\n\
    /*0070*/  EXIT ;\n";

fn kernel() -> SassKernel {
    build_kernel(&parse_listing(LISTING).unwrap()[0])
}

fn fault(args: &str) -> FaultSpec {
    let mut f = FaultFlags { sm: Some("5".into()), ..FaultFlags::default() };
    for kv in args.split_whitespace() {
        let (k, v) = kv.split_once('=').unwrap();
        let v = Some(v.to_string());
        match k {
            "model" => f.model = v,
            "unit" => f.unit = v,
            "mask" => f.mask = v,
            "operand" => f.operand = v,
            "register" => f.register = v,
            "store" => f.target = v,
            "predicate" => f.predicate = v,
            "dim" => f.dim = v,
            "lane-fault" => f.lane_fault = v,
            "lanes" => f.lanes = v,
            "warps" => f.warps = v,
            "subpartition" => f.subpartition = v,
            _ => panic!("{k}"),
        }
    }
    f.spec().unwrap()
}

/// (instruction, when, operation, register, count, other, detail, mask) per call.
fn calls(args: &str) -> Vec<(u32, When, u64, u64, u64, u64, u64, u64)> {
    let k = kernel();
    let mut sites = SiteTable::new();
    let (ip, k) = plan_injection(&k, &fault(args), &mut sites).unwrap();
    let cs = NvbitLowering::new(&k, 0x5000).unwrap().lower(&k.view, &ip.plan, &sites).unwrap();
    cs.iter()
        .map(|c| {
            assert_eq!(c.function, abi::INJECT);
            assert_eq!(c.args[7], CallArg::Const64 { value: 0x5000 });
            let v = |n: usize| match c.args[n] {
                CallArg::Const64 { value } => value,
                _ => panic!(),
            };
            let o = v(3);
            (c.instr, c.when, o & 0xff, o >> 8 & 0xff, o >> 16 & 0xff, o >> 24 & 0xff, o >> 32, v(4))
        })
        .collect()
}

#[test]
fn facts_from_sass() {
    let f = facts(&kernel());
    // the ISETP writes only P0 for the inject tool
    let fixed = predicate_writers_corrected(&kernel());
    assert_eq!(fixed.view.instrs[4].defs.len(), 2, "{:?}", fixed.view.instrs[4]);
    assert_eq!(f[0].special, Some(SpecialIndex::Thread(Dim::X)));
    assert_eq!((f[1].unit, f[1].immediate), (Some(Unit::Int), true));
    assert!(f[2].memory_source && f[2].unit.is_none());
    assert!(f[3].memory_source && f[3].unit == Some(Unit::Fp));
    assert!(f[5].forceable_guard);
    assert_eq!(f[6].shared_store, Some((1, 0)));
    assert_eq!(address_register(&SassOperand::Memory { text: "[R12+0x10]".into() }), Some(12));
    assert_eq!(address_register(&SassOperand::Memory { text: "[UR4+0x10]".into() }), None);
}

#[test]
fn each_model_lowers_to_its_calls() {
    use When::*;
    assert_eq!(calls("model=IIO mask=0x8"), vec![(1, After, op::XOR, 1, 1, 0, 0, 8)]);
    assert_eq!(
        calls("model=IMS mask=0x100"),
        vec![(2, After, op::XOR, 2, 1, 0, 0, 0x100), (3, After, op::XOR, 3, 1, 0, 0, 0x100)]
    );
    assert_eq!(
        calls("model=IMD mask=0x4 store=address"),
        vec![(6, Before, op::XOR_SAVE, 1, 1, 0, 0, 4), (6, After, op::RESTORE, 1, 1, 0, 0, 0)]
    );
    assert_eq!(
        calls("model=IMD mask=0x4 store=data"),
        vec![(6, Before, op::XOR_SAVE, 4, 1, 0, 0, 4), (6, After, op::RESTORE, 4, 1, 0, 0, 0)]
    );
    assert_eq!(calls("model=WV predicate=0"), vec![(4, After, op::INVERT_PRED, 0, 1, 0, 0, 0)]);
    assert_eq!(calls("model=IAT dim=x mask=1 lanes=0"), vec![(0, After, op::XOR, 0, 1, 0, 0, 1)]);
    assert!(calls("model=IAC dim=x mask=1").is_empty());
    let k = build_kernel(
        &parse_listing("\tFunction : k\n /*0000*/ S2UR UR4, SR_CTAID.X ;\n /*0010*/ EXIT ;\n").unwrap()[0],
    );
    let mut sites = SiteTable::new();
    let (ip, k) = plan_injection(&k, &fault("model=IAC dim=x mask=2"), &mut sites).unwrap();
    let cs = NvbitLowering::new(&k, 1).unwrap().lower(&k.view, &ip.plan, &sites).unwrap();
    assert_eq!(cs.len(), 1);
    assert_eq!(cs[0].args[3], CallArg::Const64 { value: op::XOR_UNIFORM | 4 << 8 | 1 << 16 });
    // FMUL: the other operation is the f32 sum; FADD: the product
    let ioc = calls("model=IOC unit=fp");
    assert_eq!(ioc[0], (3, Before, op::OTHER_OP, 3, 1, 0, op::OTHER_FADD, 0));
    assert_eq!(ioc[1], (3, After, op::WRITE_SCRATCH, 3, 1, 0, 0, 0));
    assert_eq!(ioc[2].6, op::OTHER_FMUL);
    assert_eq!(
        calls("model=IRA operand=dst register=9 lanes=3"),
        [0, 1, 2, 3, 4]
            .iter()
            .flat_map(|&r| {
                let i = if r == 4 { 5 } else { r };
                [(i, Before, op::SAVE, r as u64, 1, 9, 0, 0), (i, After, op::REDIRECT, r as u64, 1, 9, 0, 0)]
            })
            .collect::<Vec<_>>()
    );
    let ira = calls("model=IRA operand=src0 register=9");
    assert_eq!(ira[0], (1, Before, op::SUBSTITUTE, 0, 1, 9, 0, 0));
    assert_eq!(ira[1], (1, After, op::RESTORE, 0, 1, 9, 0, 0));
    assert_eq!(
        calls("model=IAL unit=fp lane-fault=ignore lanes=7"),
        vec![
            (3, Before, op::SAVE, 3, 1, 0, 0, 0),
            (3, After, op::DISCARD, 3, 1, 0, 0, 0),
            (5, Before, op::SAVE, 4, 1, 0, 0, 0),
            (5, After, op::DISCARD, 4, 1, 0, 0, 0)
        ]
    );
    // @!P0 FADD: set after the ISETP, restored after the FADD, negated guard
    assert_eq!(
        calls("model=IAL unit=fp lane-fault=force lanes=7"),
        vec![(4, After, op::FORCE_SET, 0, 1, 0, 1, 0), (5, After, op::FORCE_RESTORE, 0, 1, 0, 1, 0)]
    );
    assert!(calls("model=IVOC").iter().all(|c| c.1 == Before && c.2 == op::TRAP));
}

#[test]
fn location_is_packed_for_the_device() {
    let f = fault("model=IVOC lanes=0-3 subpartition=2 warps=1,3-4");
    let (at, warps) = location_args(&f.location);
    assert_eq!(at, 0xf | 5 << 32 | 3 << 48);
    assert_eq!(warps, 0b11010);
    let (at, warps) = location_args(&fault("model=IVOC").location);
    assert_eq!((at, warps), (0xffff_ffff | 5 << 32, u64::MAX));
    let mut header = [0u8; 32];
    header[..8].copy_from_slice(&42u64.to_le_bytes());
    assert_eq!(read_activations(&header), Some(42));
}

#[test]
fn dumps_say_what_the_fault_touches() {
    let k = kernel();
    let mut sites = SiteTable::new();
    let t = dump_injection(&k, &fault("model=WV predicate=0"), &mut sites, OutputFormat::Text).unwrap();
    assert!(t.contains("inject: WV touches 1 instructions of k with 1 calls"), "{t}");
    assert!(t.contains("xfpx_inject("), "{t}");
    let t = dump_injection(&k, &fault("model=WV predicate=3"), &mut sites, OutputFormat::Text).unwrap();
    assert!(t.contains("inject: WV touches nothing in k: it has no instructions writing P3"), "{t}");
}

#[test]
fn operations_and_state_match_the_layout_header() {
    let h = xfpx_asm_snippets::NVIDIA_LAYOUT_HEADER;
    for (name, v) in [
        ("XOR", op::XOR),
        ("INVERT_PRED", op::INVERT_PRED),
        ("SAVE", op::SAVE),
        ("DISCARD", op::DISCARD),
        ("REDIRECT", op::REDIRECT),
        ("SUBSTITUTE", op::SUBSTITUTE),
        ("RESTORE", op::RESTORE),
        ("OTHER_OP", op::OTHER_OP),
        ("WRITE_SCRATCH", op::WRITE_SCRATCH),
        ("FORCE_SET", op::FORCE_SET),
        ("FORCE_RESTORE", op::FORCE_RESTORE),
        ("TRAP", op::TRAP),
        ("XOR_SAVE", op::XOR_SAVE),
        ("XOR_UNIFORM", op::XOR_UNIFORM),
        ("OTHER_XOR", op::OTHER_XOR),
        ("OTHER_FMUL", op::OTHER_FMUL),
        ("OTHER_FADD", op::OTHER_FADD),
    ] {
        let def = format!("#define XFPX_INJECT_{name} {v}u");
        assert!(h.contains(&def), "{def}");
    }
    assert!(h.contains("#define XFPX_INJECT_MAX_WARPS 64u") && h.contains("#define XFPX_INJECT_WORDS 8u"));
    assert_eq!(STATE_BYTES, 32 + 64 * 32 * 8 * 4);
    assert!(xfpx_asm_snippets::NVIDIA_ABI_DEF.contains("XFPX_DEVICE_FN(xfpx_inject,"));
}

/// A kernel's loads and constant reads, as nvcc 13.0 writes them for sm_90.
const LOADS: &str = "\tFunction : loads\n\
    /*0000*/  LDC R1, c[0x0][0x28] ;\n\
    /*0010*/  LDC.64 R2, c[0x0][0x210] ;\n\
    /*0020*/  ULDC.64 UR4, c[0x0][0x208] ;\n\
    /*0030*/  LDG.E R4, desc[UR4][R2.64] ;\n\
    /*0040*/  LD.E.64 R6, [R2.64] ;\n\
    /*0050*/  LDL R8, [R1+0x4] ;\n\
    /*0060*/  LDS R9, [R8] ;\n\
    /*0070*/  LDSM.16.M88.4 R12, [R8] ;\n\
    /*0080*/  LDC R10, c[0x3][R9] ;\n\
    /*0090*/  IMAD R11, R4, c[0x0][0x0], R9 ;\n\
    /*00a0*/  ATOMG.E.ADD.STRONG.GPU PT, R16, desc[UR4][R2.64], R9 ;\n\
    /*00b0*/  STS [R8], R11 ;\n\
    /*00c0*/  EXIT ;\n";

#[test]
fn ims_touches_constant_and_shared_memory_operands() {
    let k = build_kernel(&parse_listing(LOADS).unwrap()[0]);
    let f = facts(&k);
    let sources: Vec<usize> = (0..f.len()).filter(|&i| f[i].memory_source).collect();
    // the LDCs (per-lane results), ULDC, LDS, LDSM, the second LDC and the
    // IMAD reading c[0x0][0x0]; not the global, generic or local loads
    assert_eq!(sources, vec![0, 1, 2, 6, 7, 8, 9]);
    assert_eq!(f[11].shared_store, Some((1, 0)));
}
