//! `dump`: a readable (text) or machine-readable (JSON) report of everything
//! in a code object or container — targets, sections and segments, kernels
//! with their decoded descriptors and metadata, and the disassembly in
//! llvm-objdump syntax with the IR class of each floating-point instruction.

use std::fmt::Write as _;

use serde::Serialize;
use xfpx_common::config::{KernelFilter, OutputFormat};

use crate::code_object::{CodeObject, Kernel, TextLayout};
use crate::container::{self, ContainerKind};
use crate::descriptor::{render_amdhsa, DecodedDescriptor, KernelDescriptor, WorkitemIdLayout};
use crate::elf::{Section, Segment};
use crate::error::{Error, Result};
use crate::metadata::KernelMetadata;
use crate::target::Target;

/// What [`dump`] renders.
#[derive(Debug, Clone, Default)]
pub struct DumpOptions {
    /// Only the kernels this filter admits (an error if no code object has one).
    pub kernel: Option<KernelFilter>,
    pub format: OutputFormat,
}

/// One disassembled instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DisassemblyLine {
    pub address: u64,
    /// Instruction dwords as stored.
    pub words: Vec<u32>,
    /// llvm-objdump syntax, or the decode error.
    pub text: String,
    /// IR class label of a floating-point instruction.
    pub fp_class: Option<String>,
    /// Target of a PC-relative branch or call, with its `symbol+offset` label.
    pub branch_target: Option<(u64, String)>,
    pub decoded: bool,
}

/// A kernel in the report.
#[derive(Debug, Clone, Serialize)]
pub struct KernelReport {
    pub name: String,
    pub descriptor_address: u64,
    pub entry: u64,
    pub code_start: u64,
    pub code_end: u64,
    pub preload_header_bytes: u64,
    pub descriptor: KernelDescriptor,
    pub decoded: std::result::Result<DecodedDescriptor, String>,
    pub amdhsa: String,
    pub metadata: Option<KernelMetadata>,
    pub disassembly: Vec<DisassemblyLine>,
}

/// A device function (not a kernel) in the report.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionReport {
    pub name: String,
    pub code_start: u64,
    pub code_end: u64,
    pub disassembly: Vec<DisassemblyLine>,
}

/// A code object in the report.
#[derive(Debug, Clone, Serialize)]
pub struct CodeObjectReport {
    pub bundle_id: Option<String>,
    pub containers: Vec<ContainerKind>,
    pub target: String,
    pub xnack: crate::target::FeatureSetting,
    pub sramecc: crate::target::FeatureSetting,
    pub code_object_version: u32,
    pub metadata_version: Vec<u64>,
    pub sections: Vec<Section>,
    pub segments: Vec<Segment>,
    pub text: Option<TextLayout>,
    pub kernels: Vec<KernelReport>,
    /// Functions that are not kernels (device functions reached by calls);
    /// left out when one kernel is selected.
    pub functions: Vec<FunctionReport>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct DumpReport {
    pub code_objects: Vec<CodeObjectReport>,
}

/// `symbol+0xoffset` for `addr`, with the nearest symbol at or below it, as llvm-objdump labels branch targets.
fn label(symbols: &[(String, u64)], addr: u64) -> String {
    match symbols.iter().filter(|(_, a)| *a <= addr).max_by_key(|(_, a)| *a) {
        Some((name, a)) if *a == addr => name.clone(),
        Some((name, a)) => format!("{name}+0x{:x}", addr - a),
        None => format!("0x{addr:x}"),
    }
}

/// Disassembles `code` (starting at `address`) for `processor`; `symbols`
/// (name, address) label branch targets.
pub fn disassemble(processor: Target, code: &[u8], address: u64, symbols: &[(String, u64)]) -> Vec<DisassemblyLine> {
    let mut lines = Vec::new();
    let mut offset = 0usize;
    for (addr, res) in xfpx_amd_isa::disassemble(processor, code, address) {
        let start = usize::try_from(addr - address).unwrap_or(offset);
        match res {
            Ok(insn) => {
                let class = insn.class();
                let branch_target = match insn.control_flow(addr) {
                    xfpx_amd_isa::ControlFlow::Branch { target }
                    | xfpx_amd_isa::ControlFlow::CondBranch { target }
                    | xfpx_amd_isa::ControlFlow::Call { target } => Some((target, label(symbols, target))),
                    _ => None,
                };
                lines.push(DisassemblyLine {
                    address: addr,
                    words: insn.dwords().to_vec(),
                    text: insn.to_string(),
                    fp_class: class.is_fp().then(|| class.to_string()),
                    branch_target,
                    decoded: true,
                });
                offset = start + insn.length;
            }
            Err(e) => {
                let end = (start + 4).min(code.len());
                let word = code.get(start..end).map(|b| {
                    let mut w = [0u8; 4];
                    w[..b.len()].copy_from_slice(b);
                    u32::from_le_bytes(w)
                });
                lines.push(DisassemblyLine {
                    address: addr,
                    words: word.into_iter().collect(),
                    text: format!("<{e}>"),
                    fp_class: None,
                    branch_target: None,
                    decoded: false,
                });
                offset = end;
            }
        }
    }
    let _ = offset;
    lines
}

fn symbol_addresses(co: &CodeObject<'_>) -> Vec<(String, u64)> {
    co.functions.iter().map(|f| (f.name.clone(), f.code.start)).collect()
}

fn function_reports(co: &CodeObject<'_>) -> Vec<FunctionReport> {
    let symbols = symbol_addresses(co);
    co.functions
        .iter()
        .filter(|f| !f.is_kernel)
        .map(|f| FunctionReport {
            name: f.name.clone(),
            code_start: f.code.start,
            code_end: f.code.end,
            disassembly: match co.function_code(f) {
                Ok(code) => disassemble(co.target.processor, code, f.code.start, &symbols),
                Err(_) => Vec::new(),
            },
        })
        .collect()
}

fn kernel_report(co: &CodeObject<'_>, k: &Kernel, with_code: bool) -> KernelReport {
    let processor = co.target.processor;
    let metadata = co
        .metadata
        .as_ref()
        .and_then(|m| m.kernels.iter().find(|km| km.name == k.name || km.symbol == format!("{}.kd", k.name)))
        .cloned();
    let disassembly = if with_code {
        let symbols = symbol_addresses(co);
        match co.kernel_code(k) {
            Ok(code) => disassemble(processor, code, k.code.start, &symbols),
            Err(e) => vec![DisassemblyLine {
                address: k.code.start,
                words: Vec::new(),
                text: format!("<{e}>"),
                fp_class: None,
                branch_target: None,
                decoded: false,
            }],
        }
    } else {
        Vec::new()
    };
    KernelReport {
        name: k.name.clone(),
        descriptor_address: k.descriptor_address,
        entry: k.entry,
        code_start: k.code.start,
        code_end: k.code.end,
        preload_header_bytes: k.preload_header_bytes,
        descriptor: k.descriptor,
        decoded: k.descriptor.decode(processor).map_err(|e| e.to_string()),
        amdhsa: render_amdhsa(&k.name, &k.descriptor, processor, co.version),
        metadata,
        disassembly,
    }
}

/// Builds the report for `bytes` (any container [`container::extract`] accepts).
pub fn report(bytes: &[u8], opts: &DumpOptions) -> Result<DumpReport> {
    let mut code_objects = Vec::new();
    let mut found_kernel = false;
    for extracted in container::extract(bytes)? {
        let co = CodeObject::parse(&extracted.bytes)?;
        let kernels: Vec<KernelReport> = co
            .kernels
            .iter()
            .filter(|k| opts.kernel.as_ref().is_none_or(|f| f.admits(&[&k.name])))
            .map(|k| kernel_report(&co, k, true))
            .collect();
        found_kernel |= !kernels.is_empty();
        if opts.kernel.is_some() && kernels.is_empty() {
            continue;
        }
        code_objects.push(CodeObjectReport {
            bundle_id: extracted.bundle_id.clone(),
            containers: extracted.path.clone(),
            target: co.target.to_string(),
            xnack: co.target.xnack,
            sramecc: co.target.sramecc,
            code_object_version: co.version,
            metadata_version: co.metadata.as_ref().map(|m| m.version.clone()).unwrap_or_default(),
            sections: co.elf.sections.clone(),
            segments: co.elf.segments.clone(),
            text: co.text.clone(),
            kernels,
            functions: if opts.kernel.is_none() { function_reports(&co) } else { Vec::new() },
        });
    }
    if let Some(filter) = &opts.kernel {
        if !found_kernel {
            return Err(Error::NoSuchKernel(filter.describe()));
        }
    }
    Ok(DumpReport { code_objects })
}

/// Renders `bytes` (a code object, offload bundle, compressed bundle or host
/// ELF with a `.hip_fatbin` section) as text or JSON.
pub fn dump(bytes: &[u8], opts: &DumpOptions) -> Result<String> {
    let report = report(bytes, opts)?;
    match opts.format {
        OutputFormat::Json => {
            serde_json::to_string_pretty(&report).map_err(|e| Error::malformed("report", e.to_string()))
        }
        OutputFormat::Text => Ok(render_text(&report)),
    }
}

const SEGMENT_TYPES: [(u32, &str); 8] = [
    (0, "NULL"),
    (1, "LOAD"),
    (2, "DYNAMIC"),
    (3, "INTERP"),
    (4, "NOTE"),
    (6, "PHDR"),
    (0x6474_e551, "GNU_STACK"),
    (0x6474_e552, "GNU_RELRO"),
];

fn segment_type(t: u32) -> String {
    SEGMENT_TYPES.iter().find(|(v, _)| *v == t).map(|(_, n)| (*n).to_string()).unwrap_or_else(|| format!("0x{t:x}"))
}

fn segment_flags(f: u32) -> String {
    [(4, 'R'), (2, 'W'), (1, 'E')].iter().map(|&(b, c)| if f & b != 0 { c } else { ' ' }).collect()
}

fn render_text(r: &DumpReport) -> String {
    let mut o = String::new();
    for (i, co) in r.code_objects.iter().enumerate() {
        if i > 0 {
            o.push('\n');
        }
        let via: Vec<String> = co.containers.iter().map(|c| format!("{c:?}")).collect();
        let _ = writeln!(o, "code object {} of {} (via {})", i + 1, r.code_objects.len(), via.join(" > "));
        if let Some(id) = &co.bundle_id {
            let _ = writeln!(o, "  bundle id: {id}");
        }
        let _ = writeln!(
            o,
            "  target: {} (xnack {:?}, sramecc {:?}), code object v{}, metadata version {:?}",
            co.target, co.xnack, co.sramecc, co.code_object_version, co.metadata_version
        );
        let _ = writeln!(o, "  sections:");
        for s in co.sections.iter().filter(|s| s.index != 0) {
            let _ = writeln!(
                o,
                "    [{:2}] {:<20} addr 0x{:08x} off 0x{:06x} size 0x{:06x} align {}",
                s.index, s.name, s.addr, s.offset, s.size, s.addralign
            );
        }
        let _ = writeln!(o, "  segments:");
        for s in &co.segments {
            let _ = writeln!(
                o,
                "    {:<10} {} off 0x{:06x} vaddr 0x{:08x} filesz 0x{:06x} memsz 0x{:06x} align 0x{:x}",
                segment_type(s.p_type),
                segment_flags(s.flags),
                s.offset,
                s.vaddr,
                s.filesz,
                s.memsz,
                s.align
            );
        }
        if let Some(t) = &co.text {
            let _ = match (t.next_segment_vaddr, t.slack) {
                (Some(next), Some(slack)) => writeln!(
                    o,
                    "  .text 0x{:x}..0x{:x}; next PT_LOAD at 0x{next:x}: slack 0x{slack:x} bytes",
                    t.text.start, t.text.end
                ),
                _ => writeln!(o, "  .text 0x{:x}..0x{:x}; no PT_LOAD above it", t.text.start, t.text.end),
            };
        }
        for k in &co.kernels {
            render_kernel(&mut o, k);
        }
        for f in &co.functions {
            let _ =
                writeln!(o, "\n  function {} (not a kernel), code 0x{:x}..0x{:x}", f.name, f.code_start, f.code_end);
            render_disassembly(&mut o, &f.disassembly);
        }
    }
    o
}

fn render_disassembly(o: &mut String, lines: &[DisassemblyLine]) {
    let _ = writeln!(o, "    disassembly:");
    for l in lines {
        let words: Vec<String> = l.words.iter().map(|w| format!("{w:08X}")).collect();
        let target = l.branch_target.as_ref().map(|(_, name)| format!(" <{name}>")).unwrap_or_default();
        let class = l.fp_class.as_deref().map(|c| format!("  [{c}]")).unwrap_or_default();
        let _ = writeln!(o, "\t{:<58} // {:012X}: {}{}{}", l.text, l.address, words.join(" "), target, class);
    }
}

fn sgpr_range(first: u32, count: u32) -> String {
    if count == 1 {
        format!("s{first}")
    } else {
        format!("s[{}:{}]", first, first + count - 1)
    }
}

fn render_kernel(o: &mut String, k: &KernelReport) {
    let _ = writeln!(o, "\n  kernel {}", k.name);
    let _ = writeln!(
        o,
        "    descriptor 0x{:x}, entry 0x{:x} (kernel_code_entry_byte_offset {}), code 0x{:x}..0x{:x} ({} bytes)",
        k.descriptor_address,
        k.entry,
        k.descriptor.kernel_code_entry_byte_offset,
        k.code_start,
        k.code_end,
        k.code_end - k.code_start
    );
    let d = &k.descriptor;
    let _ = writeln!(
        o,
        "    segments: group {} private {} kernarg {}; rsrc1 0x{:08x} rsrc2 0x{:08x} rsrc3 0x{:08x} properties 0x{:04x} kernarg_preload 0x{:04x}",
        d.group_segment_fixed_size,
        d.private_segment_fixed_size,
        d.kernarg_size,
        d.compute_pgm_rsrc1,
        d.compute_pgm_rsrc2,
        d.compute_pgm_rsrc3,
        d.kernel_code_properties,
        d.kernarg_preload
    );
    match &k.decoded {
        Err(e) => {
            let _ = writeln!(o, "    descriptor does not decode: {e}");
        }
        Ok(dd) => {
            let r = &dd.registers;
            let mut regs = format!("    registers: {} VGPRs", r.vgprs);
            if let (Some(acc), Some(agprs)) = (r.accum_offset, r.agprs) {
                let _ = write!(
                    regs,
                    " (unified: v0..v{} then {} AGPRs from ACCUM_OFFSET {})",
                    acc.saturating_sub(1),
                    agprs,
                    acc
                );
            }
            let _ = writeln!(o, "{regs}, {} SGPRs (with VCC/flat scratch/XNACK extras)", r.sgprs);
            let user: Vec<String> =
                dd.user_sgprs.iter().map(|u| format!("{} {}", sgpr_range(u.first, u.count), u.name)).collect();
            let sys: Vec<String> =
                dd.system_sgprs.iter().map(|u| format!("{} {}", sgpr_range(u.first, u.count), u.name)).collect();
            let _ = writeln!(
                o,
                "    user SGPRs ({}): {}",
                dd.user_sgpr_count,
                if user.is_empty() { "none".into() } else { user.join(", ") }
            );
            let _ = writeln!(o, "    system SGPRs: {}", if sys.is_empty() { "none".into() } else { sys.join(", ") });
            let wi = match dd.workitem_id_layout {
                WorkitemIdLayout::PackedInV0 => "packed in v0 (x 9:0, y 19:10, z 29:20)".to_string(),
                WorkitemIdLayout::Separate { vgprs } => format!("v0..v{}", vgprs - 1),
            };
            let dims = ["x", "x, y", "x, y, z"].get(dd.vgpr_workitem_id as usize).copied().unwrap_or("?");
            let _ = writeln!(o, "    workitem ids: {dims}, {wi}");
            let f = &dd.float_mode;
            let _ = writeln!(
                o,
                "    float mode: round f32 {:?} f16/f64 {:?}, denorm f32 {:?} f16/f64 {:?}, dx10_clamp {}, ieee {}, fp16_overflow {}",
                f.round_32, f.round_16_64, f.denorm_32, f.denorm_16_64, f.dx10_clamp as u8, f.ieee_mode as u8, f.fp16_overflow as u8
            );
            let e = &dd.exceptions;
            let enabled: Vec<&str> = [
                (e.invalid_op, "invalid"),
                (e.denorm_src, "denorm"),
                (e.div_zero, "div0"),
                (e.overflow, "overflow"),
                (e.underflow, "underflow"),
                (e.inexact, "inexact"),
                (e.int_div_zero, "int_div0"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| *n)
            .collect();
            let _ = writeln!(
                o,
                "    exception traps: {}",
                if enabled.is_empty() { "none".into() } else { enabled.join(", ") }
            );
            if dd.kernarg_preload_length > 0 {
                let _ = writeln!(
                    o,
                    "    kernarg preload: {} dwords from dword {}; preload header: {} bytes at entry",
                    dd.kernarg_preload_length, dd.kernarg_preload_offset, k.preload_header_bytes
                );
            }
        }
    }
    if let Some(m) = &k.metadata {
        let _ = writeln!(
            o,
            "    metadata: wavefront {}, max flat workgroup {}, sgpr_count {}, vgpr_count {}{}, spills s{} v{}, kernarg {} bytes (align {})",
            m.wavefront_size,
            m.max_flat_workgroup_size,
            m.sgpr_count,
            m.vgpr_count,
            m.agpr_count.map(|a| format!(", agpr_count {a}")).unwrap_or_default(),
            m.sgpr_spill_count,
            m.vgpr_spill_count,
            m.kernarg_segment_size,
            m.kernarg_segment_align
        );
        for a in &m.args {
            let _ = writeln!(
                o,
                "      arg {:<12} offset {:>3} size {:>2} {}{}",
                a.name.as_deref().unwrap_or("-"),
                a.offset,
                a.size,
                a.value_kind,
                a.address_space.as_deref().map(|s| format!(" ({s})")).unwrap_or_default()
            );
        }
    }
    let _ = writeln!(o, "    descriptor directives:");
    for line in k.amdhsa.lines() {
        let _ = writeln!(o, "      {}", line.trim_start());
    }
    render_disassembly(o, &k.disassembly);
}
