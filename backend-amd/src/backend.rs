//! The AMD side of the CLI's seam ([`xfpx_common::backend`]): code objects
//! (and the containers that hold them) described and dumped, as they are
//! or rewritten, and captured launches replayed on the emulator, the
//! original kernel or the rewritten one ([`crate::replay`]).

use crate::rewrite::{self, view, RewriteOptions, TableAddress};
use crate::{dump, extract, CodeObject, DumpOptions};
use anyhow::anyhow;
use std::path::Path;
use xfpx_common::backend::{
    Backend, BackendError, DumpRequest, Dumped, EmulatedBackend, LiveBackend, OutputBuffer, ReplayRequest, Replayed,
};
use xfpx_common::config::{KernelFilter, Mode, OutputFormat};
use xfpx_common::report::Report;
use xfpx_common::tool::ToolKind;
use xfpx_common::view::KernelView;

/// The AMD backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct Amd;

/// The modes a rewrite of the command line lowers.
pub const REWRITE_MODES: &[Mode] = &[Mode::Detect, Mode::Screen];

impl Backend for Amd {
    fn name(&self) -> &'static str {
        "amd"
    }

    /// Every code object of the image (bundles and fat binaries opened),
    /// each admitted kernel decoded into its view.
    fn describe(&self, image: &[u8], kernels: &KernelFilter) -> Result<Vec<KernelView>, BackendError> {
        let mut views = Vec::new();
        for entry in extract(image)? {
            let co = CodeObject::parse(&entry.bytes)?;
            let target = co.target.processor;
            for k in co.kernels.iter().filter(|k| kernels.admits(&[&k.name])) {
                let code = co.kernel_code(k)?;
                let skip = k.preload_header_bytes as usize;
                let start = k.code.start + skip as u64;
                let instrs = xfpx_amd_isa::disassemble(target, code.get(skip..).unwrap_or(&[]), start)
                    .map(|(addr, r)| {
                        r.map(|insn| view::DecodedInstr { addr, insn })
                            .map_err(|e| format!("kernel {}: cannot decode the instruction at {addr:#x}: {e}", k.name))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                views.push(view::kernel_view(&k.name, k.entry, &instrs));
            }
        }
        Ok(views)
    }

    /// As it is (`xfpx dump`), or rewritten for the request's mode with
    /// the kernels its filter admits (`xfpx dump --rewrite`).
    fn dump(&self, image: &[u8], request: &DumpRequest<'_>) -> Result<Dumped, BackendError> {
        let Some(config) = request.lower else {
            let opts = DumpOptions { kernel: request.kernel.cloned(), format: request.format };
            return Ok(Dumped { text: dump(image, &opts)?, image: None });
        };
        let kernels = request.kernel.unwrap_or(config.filter()).clone();
        let table = if request.runnable { TableAddress::Patchable } else { TableAddress::Known(0) };
        let opts = RewriteOptions {
            mode: config.mode,
            kernels,
            progress: request.progress.clone(),
            table,
            ..Default::default()
        };
        let outcome = rewrite::rewrite(image, &opts)?;
        let text = match request.format {
            OutputFormat::Text => outcome.to_text(),
            OutputFormat::Json => outcome.to_json(),
        };
        Ok(Dumped { text, image: Some(outcome.bytes) })
    }

    /// Programs run on ROCm's HSA runtime with the tool library.
    fn live(&self) -> Option<&dyn LiveBackend> {
        Some(&crate::live::Hsa)
    }

    fn emulated(&self) -> Option<&dyn EmulatedBackend> {
        Some(self)
    }
}

impl EmulatedBackend for Amd {
    fn replay(&self, request: &ReplayRequest<'_>) -> Result<Replayed, BackendError> {
        let launch = xfpx_amd_emu::Launch::load(request.launch).map_err(|e| anyhow!("{e}"))?;
        let opts = xfpx_amd_emu::ReplayOptions {
            target: request.target.map(str::to_string),
            code_object: request.code_object.map(Path::to_path_buf),
            out_dir: None,
            max_instructions: request.max_instructions,
            max_waves: request.max_waves,
            progress: request.progress.as_ref().map(|p| p.done.clone()),
            guard_bytes: request.guard_bytes,
        };
        opts.check_work(&launch).map_err(|e| anyhow!("{e}"))?;
        if let Some(p) = &request.progress {
            let workgroups: u64 = launch.grid.iter().map(|&n| u64::from(n)).product();
            p.total.store(workgroups, std::sync::atomic::Ordering::Relaxed);
        }
        let mut out = match request.instrument {
            // a code object rewritten already (`xfpx dump --rewrite --out`)
            // replays as it was rewritten
            None => {
                if let Some(r) = crate::replay::replay_saved(request.launch, &opts)? {
                    replayed(r)
                } else {
                    let mut o = xfpx_amd_emu::replay(request.launch, &opts).map_err(|e| anyhow!("{e}"))?;
                    locate(&mut o.report, &launch, request);
                    let outputs = o
                        .outputs
                        .into_iter()
                        .map(|b| OutputBuffer { name: b.name, elem: Some(b.elem), bytes: b.bytes })
                        .collect();
                    Replayed { report: o.report, outputs, screened_kinds: Vec::new(), failure: None }
                }
            }
            Some(config) if config.tool == ToolKind::Inject => {
                let fault = config.fault.as_ref().ok_or("the inject tool needs a fault")?;
                replayed(crate::replay::replay_injected(request.launch, fault, &opts)?)
            }
            Some(config) if config.tool == ToolKind::Counters => {
                replayed(crate::replay::replay_counters(request.launch, &opts)?)
            }
            Some(config) if config.tool == ToolKind::Flow => replayed(crate::flow::replay_flow(request.launch, &opts)?),
            Some(config) => {
                if !REWRITE_MODES.contains(&config.mode) {
                    return Err(format!(
                        "mode {} is not available for AMD replays (detect, screen)",
                        config.mode.name()
                    )
                    .into());
                }
                replayed(crate::replay::replay_rewritten(request.launch, config.mode, &opts)?)
            }
        };
        note_denormals(&mut out.report, &launch, request);
        Ok(out)
    }
}

fn replayed(r: crate::replay::RewrittenReplay) -> Replayed {
    Replayed { report: r.report, outputs: r.outputs, screened_kinds: r.screened_kinds, failure: r.failure }
}

/// Source lines for the findings of an emulator replay, from the launch's
/// code object (where it has line tables); a table that cannot be read is a
/// note in the report.
fn locate(report: &mut Report, launch: &xfpx_amd_emu::Launch, request: &ReplayRequest<'_>) {
    let note = crate::replay::code_object_path(launch, request.target, request.code_object)
        .map_err(|e| e.to_string())
        .and_then(|path| {
            xfpx_common::limits::read(&path, xfpx_common::limits::CODE_OBJECT)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
        })
        .and_then(|bytes| {
            let elf = crate::image::code_object_for(&bytes, request.target).map_err(|e| e.to_string())?;
            Ok(crate::lines::locate_report(report, &elf.bytes))
        })
        .unwrap_or_else(|e| Some(format!("source lines are unknown: {e}")));
    report.run.notes.extend(note);
}

/// The denormal handling the launched kernel's descriptor starts it with,
/// into its entry of the report (left out where the code object or its
/// descriptor cannot be read: the replay itself says why).
fn note_denormals(report: &mut Report, launch: &xfpx_amd_emu::Launch, request: &ReplayRequest<'_>) {
    use xfpx_amd_object::descriptor::DenormMode;
    let Some(kernel) = report.kernels.iter_mut().find(|k| k.name == launch.kernel) else { return };
    let name = |m: DenormMode| match m {
        DenormMode::FlushNone => "keep",
        DenormMode::FlushSrcDst => "flush",
        DenormMode::FlushSrc => "flush-inputs",
        DenormMode::FlushDst => "flush-results",
    };
    let mode = (|| {
        let path = crate::replay::code_object_path(launch, request.target, request.code_object).ok()?;
        let bytes = xfpx_common::limits::read(&path, xfpx_common::limits::CODE_OBJECT).ok()?;
        let elf = crate::image::code_object_for(&bytes, request.target).ok()?;
        let co = xfpx_amd_object::CodeObject::parse(&elf.bytes).ok()?;
        let k = co.kernel(&launch.kernel)?;
        k.descriptor.decode(co.target.processor).ok().map(|d| d.float_mode)
    })();
    kernel.denormals = mode.map(|m| xfpx_common::report::Denormals {
        f32: name(m.denorm_32).to_string(),
        f16_f64: name(m.denorm_16_64).to_string(),
    });
}
