//! The CUDA tools that read line tables out of cubins (`cuobjdump -xelf`,
//! `nvdisasm -c -gi`), and the listings they give kept across runs: a
//! program built with line information and many kernels costs seconds of
//! `nvdisasm -gi` over its cubins at every run otherwise. The listings
//! live in the disassembly cache's folder ([`DisasmCache`]), keyed by the
//! disassembler, the options and the cubin's bytes, so a rebuilt program
//! or another disassembler finds nothing and runs it again.

use crate::disasm_cache::{find_on_path, DisasmCache};
use std::path::{Path, PathBuf};
use xfpx_common::config::ToolSettings;

/// The options a kept line listing is filed under (`-g` is what an
/// `nvdisasm` that refuses `-gi` is asked for instead; either way the
/// same disassembler gives the same listing for the same bytes).
const LISTING_OPTIONS: [&str; 2] = ["-c", "-gi"];

/// The CUDA tools that read line tables out of cubins.
#[derive(Debug, Clone)]
pub struct CubinTools {
    pub cuobjdump: PathBuf,
    pub nvdisasm: PathBuf,
    /// Mapped files larger than this are not searched for cubins.
    pub max_file_bytes: u64,
    /// The folder line listings are kept in across runs (none: not kept).
    pub listings: Option<PathBuf>,
}

impl CubinTools {
    /// The tools, the file size limit and the cache folder the run
    /// configuration names (the cache folder through the system's
    /// variables, as the disassembly cache resolves it).
    pub fn of(settings: &ToolSettings) -> CubinTools {
        CubinTools {
            cuobjdump: settings.device_code_extractor.clone(),
            nvdisasm: settings.line_disassembler.clone(),
            max_file_bytes: settings.lines_max_file_mb * 1024 * 1024,
            listings: settings.disassembly_cache.resolve("nvdisasm", |v| std::env::var(v).ok()),
        }
    }

    /// Extract the cubins of `target` embedded in `file` into `dir`. A file
    /// without device code gives none.
    pub(super) fn extract(&self, file: &Path, target: &str, dir: &Path) -> Result<Vec<PathBuf>, String> {
        let out = std::process::Command::new(&self.cuobjdump)
            .args(["-xelf", target])
            .arg(file)
            .current_dir(dir)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.cuobjdump.display()))?;
        if !out.status.success() {
            return Ok(Vec::new());
        }
        let mut cubins: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cubin"))
            .collect();
        cubins.sort();
        Ok(cubins)
    }

    /// `nvdisasm -c -gi` of a cubin (`bytes`, read from the file
    /// `cubin`): the listing with its line table and the frame each inlined
    /// line was inlined into (`-g`, lines only, where this nvdisasm refuses
    /// `-gi`); a listing kept by an earlier run for the same bytes is read
    /// instead, and a new one kept.
    pub(super) fn disassemble(&self, cubin: &Path, bytes: &[u8]) -> Result<String, String> {
        let kept = self.kept_listing(bytes);
        if let Some(listing) = kept.as_ref().and_then(|(cache, key)| cache.answer(key)) {
            return Ok(listing);
        }
        let listing = self.run_disassembler(cubin)?;
        if let Some((cache, key)) = kept {
            let _ = std::fs::create_dir_all(&cache.dir).and_then(|()| cache.store(&key, listing.as_bytes()));
        }
        Ok(listing)
    }

    /// Where the listing of a cubin's `bytes` is kept, and its key (none
    /// when listings are not kept, or the disassembler cannot be found).
    fn kept_listing(&self, bytes: &[u8]) -> Option<(DisasmCache, String)> {
        let dir = self.listings.clone()?;
        let real = if self.nvdisasm.components().count() > 1 {
            self.nvdisasm.clone()
        } else {
            find_on_path(&self.nvdisasm.to_string_lossy(), std::env::var_os("PATH")?)?
        };
        let cache = DisasmCache { dir, real };
        let tag = cache.tag().ok()?;
        let key = DisasmCache::key(&tag, &LISTING_OPTIONS.map(String::from), bytes);
        Some((cache, key))
    }

    fn run_disassembler(&self, cubin: &Path) -> Result<String, String> {
        let run = |flag: &str| {
            std::process::Command::new(&self.nvdisasm)
                .args(["-c", flag])
                .arg(cubin)
                .output()
                .map_err(|e| format!("cannot run {}: {e}", self.nvdisasm.display()))
        };
        let mut out = run("-gi")?;
        if !out.status.success() {
            out = run("-g")?;
        }
        if !out.status.success() {
            return Err(format!(
                "{} failed on {}: {}",
                self.nvdisasm.display(),
                cubin.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}
