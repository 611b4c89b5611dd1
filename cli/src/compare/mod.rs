//! `xfpx compare A B`: two reports side by side (an NVIDIA run, AMD
//! replays, two AMD targets, two runs of one vendor). Per kernel and source
//! line the exception classes of each side and what only one side has (and,
//! where both reports come from `--tool flow`, the flows of each side);
//! with `--out-a DIR --out-b DIR` the output buffers of the same launch
//! compared; each difference with its likely cause where the reports show
//! one. Text, JSON (`xfpx-compare/1`) or an HTML page. Exit status 0 when
//! nothing differs, 3 when something does (1 and 2 stay xfpx's errors and
//! usage errors).

mod buffers;
mod causes;
mod flows;
mod model;
mod page;
mod text;

use crate::args::OutputFormat;
use crate::console::{say, show_raw};
use crate::exit::EXIT_FINDINGS;
use crate::{html, report_io};
use anyhow::{bail, Result};
use clap::Args;
use model::{Comparison, Side};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first report (JSON or MessagePack, schema xfpx-report/1).
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The second report.
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// Output buffers of A's launch (`xfpx replay --out DIR`).
    #[arg(long = "out-a", value_name = "DIR", requires = "out_b")]
    pub out_a: Option<PathBuf>,
    /// Output buffers of B's launch.
    #[arg(long = "out-b", value_name = "DIR", requires = "out_a")]
    pub out_b: Option<PathBuf>,
    /// `text`, or `json` (schema xfpx-compare/1) on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// Write the comparison as one self-contained HTML page here.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
}

pub fn compare(a: &CompareArgs) -> Result<i32> {
    if let Some(p) = &a.html {
        html::check_target(p)?;
    }
    let ra = report_io::read(&a.a)?;
    let rb = report_io::read(&a.b)?;
    let mut kernels = model::kernels(&ra, &rb);
    let outputs = match (&a.out_a, &a.out_b) {
        (Some(da), Some(db)) => outputs(&buffers::read(da)?, &buffers::read(db)?, &mut kernels)?,
        _ => Vec::new(),
    };
    let same = kernels.iter().all(|k| k.only_in.is_none() && !k.differs()) && outputs.iter().all(|o| o.identical);
    let c = Comparison {
        schema: model::SCHEMA,
        a: model::info(&a.a.display().to_string(), &ra),
        b: model::info(&a.b.display().to_string(), &rb),
        same,
        kernels,
        outputs,
    };
    if let Some(p) = &a.html {
        report_io::write_file(p, page::page(&c).as_bytes(), report_io::FileKind::HtmlPage)?;
        say!("xfpx: HTML page written to {}", p.display());
    }
    match a.format {
        OutputFormat::Text => show_raw!(text::text(&c)),
        OutputFormat::Json => {
            show_raw!(format!("{}\n", serde_json::to_string_pretty(&c).unwrap_or_default()))
        }
    }
    Ok(if c.same { 0 } else { EXIT_FINDINGS })
}

/// The buffers of both sides compared by name, each difference with its
/// likely cause (the launched kernel's denormal modes, and whether the
/// first difference is a subnormal against a zero).
fn outputs(
    a: &buffers::Buffers,
    b: &buffers::Buffers,
    kernels: &mut [model::KernelDiff],
) -> Result<Vec<buffers::BufferDiff>> {
    if let (Some(ka), Some(kb)) = (&a.kernel, &b.kernel) {
        if ka != kb {
            bail!("the output buffers are of different launches: kernel {ka} (--out-a) and {kb} (--out-b)");
        }
    }
    let kernel = a.kernel.as_ref().or(b.kernel.as_ref()).and_then(|n| kernels.iter().find(|k| &k.name == n));
    let mut out = Vec::new();
    for (name, (elem_a, bytes_a)) in &a.by_name {
        let Some((elem_b, bytes_b)) = b.by_name.get(name) else {
            out.push(one_side(name, elem_a, Side::A));
            continue;
        };
        let elem = match (elem_a, elem_b) {
            (Some(x), Some(y)) if x == y => x.as_str(),
            (Some(x), None) | (None, Some(x)) => x.as_str(),
            _ => "bytes",
        };
        let mut d = buffers::compare(name, elem, bytes_a, bytes_b);
        if !d.identical {
            let format = d.as_f32.as_ref().map_or(d.elem.clone(), |f| f.elem.clone());
            let mode =
                kernel.and_then(|k| causes::denormal_mode(k.denormals_a.as_ref(), k.denormals_b.as_ref(), &format));
            if let Some(side) = buffers::flushed_side(&d) {
                let (has, zero) = if side == Side::B { ("A", "B") } else { ("B", "A") };
                d.causes.push(format!(
                    "the first difference is a subnormal on {has} and zero on {zero}: denormals flushed on {zero}"
                ));
            }
            d.causes.extend(mode);
            if d.causes.is_empty() {
                d.causes.push(causes::UNKNOWN.to_string());
            }
        }
        out.push(d);
    }
    for (name, (elem_b, _)) in &b.by_name {
        if !a.by_name.contains_key(name) {
            out.push(one_side(name, elem_b, Side::B));
        }
    }
    Ok(out)
}

fn one_side(name: &str, elem: &Option<String>, side: Side) -> buffers::BufferDiff {
    let mut d = buffers::compare(name, elem.as_deref().unwrap_or("bytes"), &[], &[]);
    d.only_in = Some(side);
    d.identical = false;
    d
}
