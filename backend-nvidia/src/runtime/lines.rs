//! Source lines of the tool core: the line tables of cubins (dumped by
//! NVBit, or the executable's and libraries' own, read with the cubin
//! tools) and of listings, and the sites whose lines were put off until
//! a finding needs them.

use super::{CubinTools, ToolCore};
use crate::sass::parse_listing;
use std::collections::BTreeMap;
use std::path::Path;
use xfpx_common::site::{SiteId, SourceLoc};

impl ToolCore {
    /// Read the line table of a cubin (from `nvdisasm -c -gi` run on it),
    /// once per distinct cubin.
    pub fn load_cubin_lines(&mut self, cubin: &Path) -> Result<(), String> {
        let bytes = std::fs::read(cubin).map_err(|e| format!("cannot read {}: {e}", cubin.display()))?;
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            h.finish()
        };
        if !self.cubins_read.insert(key) {
            return Ok(());
        }
        if let Some(dir) = &self.config.tools.keep_device_code {
            let _ = std::fs::write(dir.join(format!("{key:016x}.cubin")), &bytes);
        }
        let listing = self.tools.disassemble(cubin, &bytes)?;
        let before = self.lines.len();
        self.load_listing_lines(&listing).map_err(|e| e.to_string())?;
        if self.lines.len() == before {
            return Err(format!("the cubin {} has no line table", cubin.display()));
        }
        Ok(())
    }

    /// Read the line tables of one file's embedded cubins for `target`
    /// (e.g. `sm_90`), once per file: `cuobjdump -xelf TARGET` then
    /// `nvdisasm -c -gi`. Returns how many functions gained a line table.
    pub fn load_file_lines(&mut self, file: &Path, target: &str) -> Result<usize, String> {
        if !self.scanned_files.insert(file.to_path_buf()) {
            return Ok(0);
        }
        // unique per call, also between cores of one process (tests)
        static SCANS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let scan = SCANS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("xfpx-cubins-{}-{scan}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let result = self.tools.extract(file, target, &dir).map(|cubins| {
            let mut loaded = 0;
            for cubin in cubins {
                let Ok(bytes) = std::fs::read(&cubin) else { continue };
                if let Ok(listing) = self.tools.disassemble(&cubin, &bytes) {
                    let before = self.lines.len();
                    if self.load_listing_lines(&listing).is_ok() {
                        loaded += self.lines.len() - before;
                    }
                }
            }
            loaded
        });
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    /// Look for the line table of `mangled` in the executable, then, with
    /// source lines searched in the libraries (`XFPX_NVIDIA_LINES=libs`), in
    /// the mapped shared objects with device code not larger than
    /// `tools.lines_max_file_mb` (`XFPX_NVIDIA_LINES_MAX_MB`, default 64), each
    /// file read once. Libraries are opt-in: a PyTorch run that searched
    /// them by default did not finish within 200 s (9 s without).
    fn find_lines(&mut self, mangled: &str) {
        let target = self.target.clone().unwrap_or_else(|| "sm_90".into());
        let mut files = Vec::new();
        if let Ok(exe) = std::fs::read_link("/proc/self/exe") {
            files.push(exe);
        }
        if self.scan_libraries {
            files.extend(crate::mapped::files_with_device_code(self.tools.max_file_bytes));
        }
        for file in files {
            if self.scanned_files.contains(&file) {
                continue;
            }
            if let Err(e) = self.load_file_lines(&file, &target) {
                self.note(&format!("source lines unavailable: {e}"));
                return;
            }
            if self.lines.contains_key(mangled) {
                return;
            }
        }
    }

    /// Use these tools to read cubins.
    pub fn set_cubin_tools(&mut self, tools: CubinTools) {
        self.tools = tools;
    }

    /// Also search mapped shared objects for line tables.
    pub fn set_scan_libraries(&mut self, on: bool) {
        self.scan_libraries = on;
    }

    /// Turn the reading of line tables on or off.
    pub fn set_lines_enabled(&mut self, on: bool) {
        self.lines_enabled = on;
    }

    /// Whether line tables are read.
    pub fn lines_enabled(&self) -> bool {
        self.lines_enabled
    }

    /// Whether a function's line table is known.
    pub fn has_lines(&self, mangled: &str) -> bool {
        self.lines.contains_key(mangled)
    }

    /// Read the line table of a listing with `//## File` comments.
    pub fn load_listing_lines(&mut self, listing: &str) -> Result<(), crate::sass::ParseError> {
        for f in parse_listing(listing)? {
            let table: BTreeMap<u64, SourceLoc> =
                f.instrs.iter().filter_map(|i| i.location.clone().map(|l| (i.offset, l))).collect();
            if !table.is_empty() {
                self.lines.insert(f.name, table);
            }
        }
        Ok(())
    }

    /// Read the line table of a site's function, if it was put off.
    pub(super) fn resolve_lines(&mut self, site: SiteId) {
        let Some(info) = self.sites.get(site) else {
            return;
        };
        if info.location.is_some() {
            return;
        }
        let Some(mangled) = self.lines_pending.remove(&*info.kernel) else {
            return;
        };
        let kernel = info.kernel.clone();
        self.find_lines(&mangled);
        if let Some(table) = self.lines.get(&mangled) {
            self.sites.locate(&kernel, |offset| table.get(&offset).cloned());
        }
    }
}
