//! Source lines of a code object: its DWARF (`.debug_line` and, for
//! inlining, `.debug_info` and friends, as `-g` or `-gline-tables-only`
//! write them) read with `addr2line` over the sections of [`crate::elf`],
//! mapping an instruction's address to its innermost source position and
//! the outermost frame that position was inlined into.

use addr2line::gimli::{self, EndianSlice, LittleEndian, SectionId};
use xfpx_common::report::Report;
use xfpx_common::site::SourceLoc;

use crate::code_object::CodeObject;
use crate::elf::ElfFile;
use crate::error::{Error, Result};

/// `SHF_COMPRESSED`: section contents start with a compression header.
const SHF_COMPRESSED: u64 = 0x800;

type Reader<'a> = EndianSlice<'a, LittleEndian>;

/// The line tables of one code object.
pub struct SourceLines<'a> {
    context: addr2line::Context<Reader<'a>>,
}

impl std::fmt::Debug for SourceLines<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SourceLines")
    }
}

impl<'a> SourceLines<'a> {
    /// The line tables of `elf`; `None` when it has no `.debug_line`
    /// (built without `-g`). Malformed or compressed debug sections are an
    /// error.
    pub fn read(elf: &ElfFile<'a>) -> Result<Option<SourceLines<'a>>> {
        if elf.section_by_name(".debug_line").is_none() {
            return Ok(None);
        }
        let section = |id: SectionId| -> Result<Reader<'a>> {
            let data = match elf.section_by_name(id.name()) {
                Some(s) if s.flags & SHF_COMPRESSED != 0 => {
                    return Err(Error::unsupported("debug information", format!("{} is compressed", s.name)))
                }
                Some(s) => elf.section_data(s)?,
                None => &[],
            };
            Ok(EndianSlice::new(data, LittleEndian))
        };
        let dwarf = gimli::Dwarf::load(section)?;
        let context =
            addr2line::Context::from_dwarf(dwarf).map_err(|e| Error::malformed("debug information", e.to_string()))?;
        Ok(Some(SourceLines { context }))
    }

    /// The source position of the instruction at `addr`: the innermost
    /// frame with a file and a line, and the outermost such frame when it
    /// is another one (the code was inlined). `None` where the tables say
    /// nothing (or line 0: code of no particular line).
    pub fn locate(&self, addr: u64) -> Option<SourceLoc> {
        let mut frames = self.context.find_frames(addr).skip_all_loads().ok()?;
        let mut known = Vec::new();
        while let Ok(Some(frame)) = frames.next() {
            if let Some(loc) = frame.location.and_then(position) {
                known.push(loc);
            }
        }
        let mut known = known.into_iter();
        let inner = known.next()?;
        Some(match known.next_back() {
            Some(outer) => inner.inlined_into(outer),
            None => inner,
        })
    }
}

/// Give the records of `report` that have no source position those the
/// line tables of the code object `elf` know (each kernel's records by
/// offset from its entry). Returns a note for the report when the object
/// or its tables cannot be read; an object without tables changes nothing.
pub fn locate_report(report: &mut Report, elf: &[u8]) -> Option<String> {
    let located = CodeObject::parse(elf).and_then(|co| {
        let Some(lines) = SourceLines::read(&co.elf)? else { return Ok(()) };
        for k in &mut report.kernels {
            let Some(entry) = co.kernel(&k.name).map(|ck| ck.entry) else { continue };
            for r in k.records.iter_mut().filter(|r| r.site.location.is_none()) {
                r.site.location = lines.locate(entry + r.site.offset);
            }
        }
        Ok(())
    });
    located.err().map(|e| format!("source lines are unknown: {e}"))
}

/// A frame's position, when it has a file and a line other than 0.
fn position(loc: addr2line::Location<'_>) -> Option<SourceLoc> {
    let line = loc.line.filter(|&l| l > 0)?;
    let mut at = SourceLoc::new(clean_path(loc.file?), line);
    at.column = loc.column.filter(|&c| c > 0);
    Some(at)
}

/// `path` without its `.` components (`././a.h` → `a.h`): DWARF joins the
/// compilation directory, the include directory and the name, which are
/// often `.` when a build keeps paths relative.
fn clean_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_string()
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::clean_path;

    #[test]
    fn dot_components_are_dropped() {
        assert_eq!(clean_path("././lines_math.h"), "lines_math.h");
        assert_eq!(clean_path("./lines.hip"), "lines.hip");
        assert_eq!(clean_path("/src/./a/../b.hip"), "/src/a/../b.hip");
        assert_eq!(clean_path("src//k.hip"), "src/k.hip");
        assert_eq!(clean_path("."), ".");
    }
}
