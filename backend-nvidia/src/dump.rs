//! Debug dumps: per kernel, each SASS instruction with the probes placed
//! there (device function, arguments, registers) and the IR plan. Used by
//! `xfpx dump --vendor nvidia LISTING` and by the tool's `--dump DIR`.

use crate::lower::{CallInsertion, NvbitLowering};
use crate::modes::plan_kernel;
use crate::sass::{build_kernel, parse_listing, SassKernel};
use serde::Serialize;
use std::fmt::Write as _;
use xfpx_common::config::{KernelFilter, Mode, OutputFormat};
use xfpx_common::lower::Lowering;
use xfpx_common::plan::Plan;
use xfpx_common::probe::When;
use xfpx_common::site::SiteTable;
use xfpx_common::tool::{Detector, ToolKind};

/// What to dump.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    /// Only the kernels this filter admits (all when `None`).
    pub kernel: Option<KernelFilter>,
    pub format: OutputFormat,
    /// The run mode whose plan is shown.
    pub mode: Mode,
    /// The tool whose plan is shown (the detector in `mode`, or counters).
    pub tool: ToolKind,
    /// The fault the inject tool injects (with `tool` inject).
    pub fault: Option<xfpx_common::fault::FaultSpec>,
}

impl Default for DumpOptions {
    fn default() -> Self {
        DumpOptions {
            kernel: None,
            format: OutputFormat::Text,
            mode: Mode::Detect,
            tool: ToolKind::Detect,
            fault: None,
        }
    }
}

/// Why a dump failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("SASS listing: {0}")]
    Parse(#[from] crate::sass::ParseError),
    #[error("the listing has no functions (expected `cuobjdump -sass` or `nvdisasm` output)")]
    Empty,
    #[error("no kernel of the listing matches `{0}`")]
    NoKernel(String),
    #[error("mode {} is not available for NVIDIA (fast, detect)", .0.name())]
    Mode(Mode),
    #[error("kernel `{kernel}`: {message}")]
    Kernel { kernel: String, message: String },
}

/// One instrumented kernel: its instructions, plan and calls.
#[derive(Debug, Serialize)]
pub struct KernelDump<'a> {
    pub kernel: &'a str,
    pub plan: &'a Plan,
    pub calls: &'a [CallInsertion],
    pub instructions: Vec<InstrDump<'a>>,
}

/// One instruction with its calls.
#[derive(Debug, Serialize)]
pub struct InstrDump<'a> {
    pub index: usize,
    pub offset: u64,
    pub sass: &'a str,
    pub class: String,
    pub before: Vec<&'a CallInsertion>,
    pub after: Vec<&'a CallInsertion>,
}

fn call_text(c: &CallInsertion) -> String {
    let args: Vec<String> = c.args.iter().map(|a| a.describe()).collect();
    format!("{}({})", c.function, args.join(", "))
}

/// Render one kernel (shared by the listing dump and the run-time dumps).
pub fn render_kernel(kernel: &SassKernel, plan: &Plan, calls: &[CallInsertion], format: OutputFormat) -> String {
    let instructions: Vec<InstrDump> = kernel
        .view
        .instrs
        .iter()
        .enumerate()
        .map(|(i, ins)| InstrDump {
            index: i,
            offset: ins.offset,
            sass: &ins.text,
            class: ins.class.label(),
            before: calls.iter().filter(|c| c.instr as usize == i && c.when == When::Before).collect(),
            after: calls.iter().filter(|c| c.instr as usize == i && c.when == When::After).collect(),
        })
        .collect();
    match format {
        OutputFormat::Json => {
            let d = KernelDump { kernel: &kernel.view.name, plan, calls, instructions };
            serde_json::to_string_pretty(&d).unwrap_or_default()
        }
        OutputFormat::Text => {
            let mut s = String::new();
            let _ = writeln!(
                s,
                "kernel {}: {} instructions, {} probes, {} calls",
                kernel.view.name,
                kernel.view.instrs.len(),
                plan.probes.len(),
                calls.len()
            );
            for d in &instructions {
                for c in &d.before {
                    let _ = writeln!(s, "        before: {}", call_text(c));
                }
                let loc =
                    kernel.view.instrs[d.index].location.as_ref().map(|l| format!("  // {l}")).unwrap_or_default();
                let _ = writeln!(s, "  /*{:04x}*/ {:<48} [{}]{loc}", d.offset, d.sass, d.class);
                for c in &d.after {
                    let _ = writeln!(s, "        after:  {}", call_text(c));
                }
            }
            let _ = writeln!(s, "plan:");
            for p in &plan.probes {
                let _ = writeln!(
                    s,
                    "  instr {} {:?} site {}: {}",
                    p.instr,
                    p.when,
                    p.site.0,
                    serde_json::to_string(&p.action).unwrap_or_default()
                );
            }
            s
        }
    }
}

/// Dump a saved SASS listing as the detector (or the counters, inject or
/// flow tool) would instrument it.
pub fn dump_listing(text: &str, opts: &DumpOptions) -> Result<String, Error> {
    if !crate::modes::MODES.contains(&opts.mode) {
        return Err(Error::Mode(opts.mode));
    }
    let functions = parse_listing(text)?;
    if functions.is_empty() {
        return Err(Error::Empty);
    }
    let selected: Vec<_> =
        functions.iter().filter(|f| opts.kernel.as_ref().is_none_or(|k| k.admits(&[&f.name]))).collect();
    if selected.is_empty() {
        return Err(Error::NoKernel(opts.kernel.as_ref().map(KernelFilter::describe).unwrap_or_default()));
    }
    let mut sites = SiteTable::new();
    let detector = Detector::default();
    let mut parts = Vec::new();
    for f in selected {
        let kernel = build_kernel(f);
        let fail = |message: String| Error::Kernel { kernel: f.name.clone(), message };
        if opts.tool == ToolKind::Inject {
            let fault =
                opts.fault.as_ref().ok_or_else(|| fail("the inject tool needs a fault (--model ...)".into()))?;
            parts.push(crate::inject::dump_injection(&kernel, fault, &mut sites, opts.format).map_err(fail)?);
            continue;
        }
        if opts.tool == ToolKind::Counters {
            parts.push(crate::counts::dump_counts(&kernel, &mut sites, opts.format).map_err(fail)?);
            continue;
        }
        if opts.tool == ToolKind::Flow {
            let plan = crate::flow::flow_plan(&kernel, &xfpx_common::flow::FlowTool::default(), &mut sites);
            let calls = NvbitLowering::new(&kernel, 0)
                .and_then(|mut l| l.lower(&kernel.view, &plan, &sites))
                .map_err(|e| fail(e.to_string()))?;
            parts.push(render_kernel(&kernel, &plan, &calls, opts.format));
            continue;
        }
        let planned = plan_kernel(&detector, &kernel, &mut sites, opts.mode).map_err(fail)?;
        let plan = planned.plan;
        let mut lowering = NvbitLowering::new(&kernel, 0)
            .map(|l| l.grouping(opts.mode == Mode::Fast))
            .map_err(|e| fail(e.to_string()))?;
        let calls = lowering.lower(&kernel.view, &plan, &sites).map_err(|e| fail(e.to_string()))?;
        let mut part = render_kernel(&kernel, &plan, &calls, opts.format);
        if opts.format == OutputFormat::Text {
            let left_out = lowering.left_out_in_flight();
            if left_out > 0 {
                let _ = writeln!(part, "{left_out} calls left out: a warpgroup matrix multiply may be in flight there");
            }
            if let Some(t) = planned.thinned {
                let _ = writeln!(
                    part,
                    "fast mode: {} of {} checks dropped (their values reach a later check), {} added where loops exit",
                    t.dropped, t.checks, t.loop_exit_checks
                );
            }
            if let Some(e) = &planned.fallback {
                let _ = writeln!(part, "fast mode: every result checked ({e})");
            }
            if let Some(e) = &planned.partial_flow {
                let _ =
                    writeln!(part, "fast mode: checks that repeat an earlier one kept, and checks not grouped ({e})");
            }
        }
        parts.push(part);
    }
    Ok(match opts.format {
        OutputFormat::Text => parts.join("\n"),
        OutputFormat::Json => format!("[\n{}\n]\n", parts.join(",\n")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "\tFunction : k\n        /*0000*/  FADD R1, R2, R3 ;\n        /*0010*/  EXIT ;\n\tFunction : j\n        /*0000*/  EXIT ;\n";

    #[test]
    fn text_and_json() {
        let t = dump_listing(LISTING, &DumpOptions::default()).expect("dumps");
        assert!(t.contains("kernel k: 2 instructions, 1 probes, 1 calls"), "{t}");
        assert!(t.contains("after:  xfpx_check_value(guard, R1, 0x0, 0x0, 0x704, 0x0, launch)"), "{t}");
        assert!(t.contains("kernel j"));
        let j = dump_listing(
            LISTING,
            &DumpOptions {
                kernel: Some(KernelFilter::exactly("k")),
                format: OutputFormat::Json,
                ..DumpOptions::default()
            },
        )
        .expect("dumps");
        let v: serde_json::Value = serde_json::from_str(&j).expect("valid json");
        assert_eq!(v.as_array().map(Vec::len), Some(1));
        assert_eq!(v[0]["instructions"][0]["after"][0]["function"], "xfpx_check_value");
    }

    #[test]
    fn errors_are_one_line() {
        for (text, kernel) in [
            ("", None),
            (LISTING, Some("nope")),
            ("/*0000*/ FADD R1 ;", None),
            ("\tFunction : k\n /*0000*/ FADD R1,, R2 ;", None),
        ] {
            let e = dump_listing(
                text,
                &DumpOptions {
                    kernel: kernel.map(KernelFilter::exactly),
                    format: OutputFormat::Text,
                    ..DumpOptions::default()
                },
            )
            .expect_err("fails");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
}
