use super::*;

const K: &str = "_Z10relax_stepiPfPKfS_fi";
const K_DEMANGLED: &str = "relax_step(int, float*, float const*, float*, float, int)";

/// Parameter bytes and layout of values laid out at 8-byte-aligned offsets.
fn packed(values: &[(u64, u64)]) -> (Vec<u8>, Vec<ParamSlot>) {
    let mut bytes = Vec::new();
    let mut layout = Vec::new();
    for &(value, size) in values {
        let offset = (bytes.len() as u64).next_multiple_of(size.min(8));
        bytes.resize(offset as usize, 0);
        bytes.extend_from_slice(&value.to_le_bytes()[..size.min(8) as usize]);
        bytes.resize((offset + size) as usize, 0);
        layout.push(ParamSlot { offset, size });
    }
    (bytes, layout)
}

fn relax_params(x: u64, target: u64, diag: u64) -> (Vec<u8>, Vec<ParamSlot>) {
    packed(&[(16384, 4), (x, 8), (target, 8), (diag, 8), (0x3f80_0000, 4), (5000, 4)])
}

fn run_with_relax() -> ScreenRun {
    let mut s = ScreenRun::new();
    s.planned(K, [FpFormat::F32]);
    s.allocated(0x7f00_0000_0000, 65_536);
    s.allocated(0x7f00_0001_0000, 65_536);
    s.allocated(0x7f00_0002_0000, 40_000);
    s
}

#[test]
fn a_screened_launch_reads_the_float_buffers_it_may_write() {
    let mut s = run_with_relax();
    // diag is passed as a pointer into the middle of its allocation
    let (p, l) = relax_params(0x7f00_0000_0000, 0x7f00_0001_0000, 0x7f00_0002_0000 + 4 * 5000);
    let plan = s.plan(K, K_DEMANGLED, &p, &l, 5000, true).expect("screened");
    let after: Vec<(u64, u64, u16, u8)> =
        plan.after.buffers().iter().map(|b| (b.base, b.bytes, b.param, b.format)).collect();
    // target is `float const*`: the kernel does not write it
    assert_eq!(
        after,
        vec![(0x7f00_0000_0000, 65_536, 1, FpFormat::F32.code()), (0x7f00_0002_0000, 40_000, 3, FpFormat::F32.code())]
    );
    assert_eq!((plan.after.serial, plan.after.report), (5000, 1));
    // first screen of these buffers: counted just before the launch too
    assert_eq!(plan.before.buffers(), plan.after.buffers());
    assert_eq!(plan.before.report, 0);
    assert_ne!(plan.before.scratch, plan.after.scratch);
    // the next launch compares with what this one left: no scan before
    let plan2 = s.plan(K, K_DEMANGLED, &p, &l, 5001, true).expect("screened");
    assert_eq!(plan2.before.count, 0);
    assert_eq!(plan2.after.buffers().iter().map(|b| b.slot).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(s.declared_type(K, 3).as_deref(), Some("float*"));
}

#[test]
fn an_instrumented_launch_only_brings_counts_up_to_date() {
    let mut s = run_with_relax();
    let (p, l) = relax_params(0x7f00_0000_0000, 0x7f00_0001_0000, 0x7f00_0002_0000);
    let plan = s.plan(K, K_DEMANGLED, &p, &l, 0, false).expect("scanned");
    assert_eq!(plan.before.count, 0, "its own scan after sets the counts");
    assert_eq!((plan.after.count, plan.after.report), (2, 0));
    // a screened launch later finds the counters set
    assert_eq!(s.plan(K, K_DEMANGLED, &p, &l, 1, true).expect("screened").before.count, 0);
}

#[test]
fn launches_that_cannot_be_screened_say_why() {
    let mut s = run_with_relax();
    // pointers into memory the tool never saw allocated
    let (p, l) = relax_params(0x1000, 0x2000, 0x3000);
    assert_eq!(s.plan(K, K_DEMANGLED, &p, &l, 0, true), Err(Unchecked::NoBuffers));
    // only a read-only buffer is known
    let (p, l) = relax_params(0x1000, 0x7f00_0001_0000, 0x3000);
    assert_eq!(s.plan(K, K_DEMANGLED, &p, &l, 0, true), Err(Unchecked::NoBuffers));
    // a kernel without floating-point results
    let copy = "_Z4copyPiPKi";
    s.planned(copy, []);
    let (p, l) = packed(&[(0x7f00_0000_0000, 8), (0x7f00_0001_0000, 8)]);
    assert_eq!(s.plan(copy, "copy(int*, int const*)", &p, &l, 0, true), Err(Unchecked::NothingToCheck));
    // a kernel never planned: only declared floating-point buffers
    assert!(s.plan("_Z1kPf", "k(float*)", &p[..8], &l[..1], 0, true).is_ok());
    assert_eq!(s.plan("_Z1kPv", "k(void*)", &p[..8], &l[..1], 0, true), Err(Unchecked::NoBuffers));
}

#[test]
fn a_kernel_not_planned_yet_reads_structures_in_the_formats_its_name_names() {
    let mut s = ScreenRun::new();
    s.allocated(0x10_0000, 4096);
    // a functor and an array of pointers passed by value, as PyTorch's
    // element-wise kernels take them, launched before the kernel is planned
    let mangled = "_ZN2at6native29vectorized_elementwise_kernel";
    let name = |t: &str| {
        format!(
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<{t}>, std::array<char*, 1ul> \
             >(int, at::native::FillFunctor<{t}>, std::array<char*, 1ul>)"
        )
    };
    let (p, l) = packed(&[(4096, 4), (0x3f80_0000, 4), (0x10_0000, 8)]);
    let plan = s.plan(mangled, &name("double"), &p, &l, 0, true).expect("screened");
    let got: Vec<(u64, u16, u8)> = plan.after.buffers().iter().map(|b| (b.base, b.param, b.format)).collect();
    assert_eq!(got, vec![(0x10_0000, 2, FpFormat::F64.code())]);
    // once planned, its own formats decide
    s.planned(mangled, [FpFormat::F32]);
    let plan = s.plan(mangled, &name("double"), &p, &l, 1, true).expect("screened");
    assert!(plan.after.buffers().iter().all(|b| b.format == FpFormat::F32.code()));
    // a name that names no floating-point type still cannot be screened before it is planned
    let plain = "_Z4fillPv";
    assert_eq!(
        s.plan(plain, "fill(void*)", &p[8..16], &[ParamSlot { offset: 0, size: 8 }], 0, true),
        Err(Unchecked::NoBuffers)
    );
}

#[test]
fn unknown_types_are_read_in_the_kernels_widest_format() {
    let mut s = ScreenRun::new();
    s.allocated(0x10_0000, 4096);
    s.allocated(0x20_0000, 4096);
    s.allocated(0x30_0000, 4096);
    // a C name (no types) computing in f32 and f64; a structure holding
    // two pointers, a pointer, an int
    s.planned("mixed", [FpFormat::F32]);
    s.planned("mixed_helper", [FpFormat::F64]);
    s.calls("mixed", "mixed_helper");
    let mut p = vec![0u8; 40];
    p[0..8].copy_from_slice(&0x10_0000u64.to_le_bytes());
    p[8..16].copy_from_slice(&0x20_0800u64.to_le_bytes());
    p[16..24].copy_from_slice(&0x30_0000u64.to_le_bytes());
    p[24..28].copy_from_slice(&7u32.to_le_bytes());
    let l = [ParamSlot { offset: 0, size: 16 }, ParamSlot { offset: 16, size: 8 }, ParamSlot { offset: 24, size: 4 }];
    let plan = s.plan("mixed", "mixed", &p, &l, 9, true).expect("screened");
    let got: Vec<(u64, u16, u8)> = plan.after.buffers().iter().map(|b| (b.base, b.param, b.format)).collect();
    let f64 = FpFormat::F64.code();
    assert_eq!(got, vec![(0x10_0000, 0, f64), (0x20_0000, 0, f64), (0x30_0000, 1, f64)]);
    // without the helper's f64 it reads f32 words
    s.planned("single", [FpFormat::F32, FpFormat::F16x2]);
    let plan = s.plan("single", "single", &p, &l, 10, true).expect("screened");
    assert!(plan.after.buffers().iter().all(|b| b.format == FpFormat::F32.code()));
    assert_eq!(plan.before.count, 3, "new (allocation, format) counters");
}

#[test]
fn counters_are_given_back_when_memory_is_freed_or_reused() {
    let mut s = run_with_relax();
    let (p, l) = relax_params(0x7f00_0000_0000, 0x7f00_0001_0000, 0x7f00_0002_0000);
    s.plan(K, K_DEMANGLED, &p, &l, 0, true).expect("screened");
    s.freed(0x7f00_0002_0000);
    assert_eq!(s.plan(K, K_DEMANGLED, &p, &l, 1, true).expect("screened").after.count, 1, "diag is gone");
    // a new allocation at the same place is a new buffer: counted before
    s.allocated(0x7f00_0002_0000, 40_000);
    let plan = s.plan(K, K_DEMANGLED, &p, &l, 2, true).expect("screened");
    assert_eq!(plan.before.buffers().iter().map(|b| b.base).collect::<Vec<_>>(), vec![0x7f00_0002_0000]);
    // reuse without a free seen: an allocation over x drops x's counter
    s.allocated(0x7f00_0000_0000, 1 << 20);
    let plan = s.plan(K, K_DEMANGLED, &p, &l, 3, true).expect("screened");
    assert_eq!(
        plan.before.buffers().iter().map(|b| (b.base, b.bytes)).collect::<Vec<_>>(),
        vec![(0x7f00_0000_0000, 1 << 20)]
    );
}

#[test]
fn running_out_of_counters_leaves_the_launch_unchecked_and_takes_nothing() {
    let mut s = ScreenRun::with_slots(1);
    s.planned(K, [FpFormat::F32]);
    s.allocated(0x10_0000, 4096);
    s.allocated(0x20_0000, 4096);
    let (p, l) = relax_params(0x10_0000, 0, 0x20_0000);
    assert_eq!(s.plan(K, K_DEMANGLED, &p, &l, 0, true), Err(Unchecked::Limits));
    // the counter the first buffer took was given back
    let (p, l) = relax_params(0x20_0000, 0, 0);
    assert!(s.plan(K, K_DEMANGLED, &p, &l, 1, true).is_ok());
}

#[test]
fn many_buffers_are_cut_to_what_a_scan_reads_with_a_note() {
    let mut s = ScreenRun::new();
    s.planned("many", [FpFormat::F32]);
    let mut values = Vec::new();
    for i in 0..20u64 {
        s.allocated(0x100_0000 * (i + 1), 256);
        values.push((0x100_0000 * (i + 1), 8));
    }
    let (p, l) = packed(&values);
    let plan = s.plan("many", "many", &p, &l, 0, true).expect("screened");
    assert_eq!(plan.after.count as usize, MAX_BUFFERS);
    let notes = s.take_notes();
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("reach 20 buffers; each screen reads the first 16"), "{notes:?}");
    s.plan("many", "many", &p, &l, 1, true).expect("screened");
    assert!(s.take_notes().is_empty(), "said once");
    // an unaligned base is not read, and said once
    s.allocated(0x9000_0008, 64);
    let (p, l) = packed(&[(0x9000_0008, 8)]);
    assert_eq!(s.plan("many", "many", &p, &l, 2, true), Err(Unchecked::NoBuffers));
    assert_eq!(s.take_notes().len(), 1);
}

#[test]
fn an_allocation_over_one_that_starts_below_it_takes_its_counters() {
    let mut s = ScreenRun::with_slots(2);
    s.planned(K, [FpFormat::F32]);
    s.allocated(0x10_0000, 0x1000);
    let (p, l) = relax_params(0x10_0000, 0, 0);
    let first = s.plan(K, K_DEMANGLED, &p, &l, 0, true).expect("screened");
    assert_eq!(first.before.count, 1);
    // memory reused without a free seen, from inside the old allocation
    s.allocated(0x10_0800, 0x1000);
    let (p, l) = relax_params(0x10_0800, 0, 0);
    let plan = s.plan(K, K_DEMANGLED, &p, &l, 1, true).expect("screened");
    assert_eq!(plan.before.count, 1, "a new buffer, counted before");
    assert_eq!(plan.after.buffers()[0].slot, first.after.buffers()[0].slot, "the old counter was given back");
    // the old base is no allocation any more
    let (p, l) = relax_params(0x10_0000, 0, 0);
    assert_eq!(s.plan(K, K_DEMANGLED, &p, &l, 2, true), Err(Unchecked::NoBuffers));
}
