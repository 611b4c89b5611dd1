//! What the GPU check of the scan kernel (`tests/gpu/screen/screen_unit.cu`)
//! must print, from the counting rule's host mirror
//! (`xfpx_nvidia::screen::reading::count`) and the scan's counter
//! semantics: the committed `screen_unit.expected` is this output
//! (`XFPX_BLESS=1` rewrites it). `tests/gpu/screen-check.sh` compares the
//! device's lines with it.

use std::fmt::Write as _;
use std::path::PathBuf;
use xfpx_common::class::FpFormat;
use xfpx_nvidia::screen::reading::{count, Counts};

fn expected_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/gpu/screen/screen_unit.expected")
}

/// splitmix64 bytes, as `screen_unit.cu` makes them.
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(n);
    out
}

/// The device counters: per slot, (serial, nan, inf) of its last scan.
#[derive(Default)]
struct Device {
    slots: std::collections::HashMap<u32, (u32, u64, u64)>,
}

impl Device {
    /// One scan of `bufs` (bytes, slot, format), printed as the CUDA check prints it.
    fn scan(&mut self, out: &mut String, name: &str, serial: u32, report: bool, bufs: &[(&[u8], u32, FpFormat)]) {
        let mut records = Vec::new();
        for (i, (bytes, slot, format)) in bufs.iter().enumerate() {
            let Counts { nan, inf, first } = count(bytes, *format);
            let (previous, nan_before, inf_before) = self.slots.insert(*slot, (serial, nan, inf)).unwrap_or((0, 0, 0));
            let _ = writeln!(out, "{name} buffer={i} serial={serial} nan={nan} inf={inf}");
            if report && (nan > nan_before || inf > inf_before) {
                let first = first.map_or(-1, |f| f as i64);
                records.push(format!(
                    "{name} record param={i} serial={serial} previous={previous} format={} nan={nan_before}->{nan} \
                     inf={inf_before}->{inf} first={first} bytes={}",
                    format.code(),
                    bytes.len()
                ));
            }
        }
        for r in records {
            let _ = writeln!(out, "{r}");
        }
    }
}

fn expected() -> String {
    let mut out = String::new();
    let mut d = Device::default();
    let n1 = noise(1, (1 << 20) + 12);
    let formats = [FpFormat::F64, FpFormat::F32, FpFormat::Bf16, FpFormat::F16];
    let names = ["noise-f64", "noise-f32", "noise-bf16", "noise-f16"];
    for (f, (format, name)) in formats.iter().zip(names).enumerate() {
        d.scan(&mut out, name, 1 + f as u32, true, &[(&n1, f as u32, *format)]);
    }
    let (a, b, c) = (noise(2, 4096), noise(3, 100_003), noise(4, 24));
    d.scan(&mut out, "multi", 9, true, &[(&a, 10, FpFormat::F32), (&b, 11, FpFormat::F16), (&c, 12, FpFormat::F64)]);
    let mut g: Vec<u8> = std::iter::repeat_n(1.0f32.to_le_bytes(), 1000).flatten().collect();
    d.scan(&mut out, "growth-a", 100, true, &[(&g, 20, FpFormat::F32)]);
    g[4 * 700..4 * 701].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    d.scan(&mut out, "growth-b", 101, true, &[(&g, 20, FpFormat::F32)]);
    d.scan(&mut out, "growth-c", 102, true, &[(&g, 20, FpFormat::F32)]);
    g[4 * 3..4 * 4].copy_from_slice(&0x7f80_0000u32.to_le_bytes());
    d.scan(&mut out, "growth-d", 103, false, &[(&g, 20, FpFormat::F32)]);
    g[4 * 4..4 * 5].copy_from_slice(&0x7f80_0000u32.to_le_bytes());
    d.scan(&mut out, "growth-e", 104, true, &[(&g, 20, FpFormat::F32)]);
    let t = [0x00u8, 0x7c, 0x01, 0x7e, 0xff, 0x3b];
    d.scan(&mut out, "tail", 200, true, &[(&t, 30, FpFormat::F16)]);
    let mut z = vec![0u8; 64 << 20];
    let end = z.len();
    z[end - 8..].copy_from_slice(&0x7ff8_0000_0000_0001u64.to_le_bytes());
    d.scan(&mut out, "big", 300, true, &[(&z, 40, FpFormat::F64)]);
    out.push_str("screen_unit: done\n");
    out
}

#[test]
fn the_gpu_checks_expected_output_is_current() {
    let want = expected();
    // the cases exercise what they are meant to
    assert!(want.contains("growth-b record param=0 serial=101 previous=100 format=4 nan=0->1 inf=0->0 first=700"));
    assert!(want.contains("growth-e record param=0 serial=104 previous=103 format=4 nan=1->1 inf=1->2 first=3"));
    assert!(!want.contains("growth-c record") && !want.contains("growth-d record"));
    assert!(want.contains("tail record param=0 serial=200 previous=0 format=0 nan=0->1 inf=0->1 first=0 bytes=6"));
    assert!(want.contains("big record param=0 serial=300 previous=0 format=5 nan=0->1 inf=0->0 first=8388607"));
    let path = expected_path();
    if std::env::var("XFPX_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &want).expect("write the expected output");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(have == want, "{} is stale: rerun this test with XFPX_BLESS=1", path.display());
}
