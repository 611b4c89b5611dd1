//! What a rewritten object says about its own instrumentation, so that it
//! can run without being rewritten again: a non-allocated section,
//! [`RECORD_SECTION`], holding JSON with the mode, the table's slots, the
//! sites they name, each kernel's state, and the addresses of the literal
//! dwords that hold the table's address. Whoever places the table writes
//! its address there ([`RewriteRecord::place_table`]). Objects rewritten
//! with a patchable table ([`TableAddress::Patchable`]) carry it.
//!
//! [`TableAddress::Patchable`]: super::table::TableAddress::Patchable

use serde::{Deserialize, Serialize};
use xfpx_common::site::{SiteInfo, SiteTable};

use super::outcome::{KernelState, Mode, RewriteError};
use super::table::TableLayout;
use crate::elf::ElfFile;

/// Name of the section holding the record.
pub const RECORD_SECTION: &str = ".xfpx.rewrite";
/// Version of the record's layout.
pub const RECORD_FORMAT: u32 = 1;

/// The record of a rewritten object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewriteRecord {
    pub format: u32,
    pub mode: Mode,
    pub target: String,
    pub table: TableLayout,
    /// The sites the table's slots name, by id.
    pub sites: Vec<SiteInfo>,
    /// Where the table's address goes.
    pub table_address_literals: Vec<LiteralAt>,
    pub kernels: Vec<RecordedKernel>,
    /// What a reader of the findings should know.
    pub notes: Vec<String>,
}

/// A literal dword holding half of the table's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiteralAt {
    /// Its virtual address in the rewritten object.
    pub address: u64,
    /// The high half (else the low one).
    pub high: bool,
}

/// What became of one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedKernel {
    pub name: String,
    pub state: KernelState,
    pub probes: usize,
    pub waits_added: usize,
    /// How many of its floating-point sites are checked (absent in records
    /// of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<xfpx_common::report::SiteCoverage>,
}

fn record_error(what: impl std::fmt::Display) -> RewriteError {
    RewriteError::Record(what.to_string())
}

impl RewriteRecord {
    /// The record of the ELF `elf` (None: it was not rewritten with one).
    pub fn read(elf: &[u8]) -> Result<Option<RewriteRecord>, RewriteError> {
        let file = ElfFile::parse(elf)?;
        let Some(section) = file.section_by_name(RECORD_SECTION) else { return Ok(None) };
        let data = file.section_data(section)?;
        let record: RewriteRecord = serde_json::from_slice(data).map_err(record_error)?;
        if record.format != RECORD_FORMAT {
            return Err(record_error(format!(
                "format {} is not the one this version reads ({RECORD_FORMAT})",
                record.format
            )));
        }
        Ok(Some(record))
    }

    /// The record as the section holds it.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Bytes of the table.
    pub fn table_bytes(&self) -> u64 {
        self.table.bytes()
    }

    /// The sites, with the ids the table's slots use.
    pub fn site_table(&self) -> SiteTable {
        let mut sites = SiteTable::new();
        for s in &self.sites {
            sites.intern(&s.kernel, s.offset, s.instr.clone(), s.location.clone());
        }
        sites
    }

    /// `elf` with the table placed at `address`.
    pub fn place_table(&self, elf: &[u8], address: u64) -> Result<Vec<u8>, RewriteError> {
        let mut out = elf.to_vec();
        write_table_address(&mut out, &self.table_address_literals, address)?;
        Ok(out)
    }
}

/// Writes `address` into the literal dwords `literals` of the ELF `bytes`.
pub fn write_table_address(bytes: &mut [u8], literals: &[LiteralAt], address: u64) -> Result<(), RewriteError> {
    let offsets: Vec<(usize, bool)> = {
        let file = ElfFile::parse(bytes)?;
        literals
            .iter()
            .map(|l| {
                let s = file
                    .section_at_addr(l.address)
                    .filter(|s| l.address.saturating_add(4) <= s.addr.saturating_add(s.size))
                    .ok_or_else(|| record_error(format!("the table's address at {:#x} is in no section", l.address)))?;
                let at = s.offset.checked_add(l.address - s.addr).and_then(|o| usize::try_from(o).ok());
                match at {
                    Some(at) if at.checked_add(4).is_some_and(|end| end <= bytes.len()) => Ok((at, l.high)),
                    _ => Err(record_error(format!("the table's address at {:#x} is outside the file", l.address))),
                }
            })
            .collect::<Result<_, _>>()?
    };
    for (at, high) in offsets {
        let half = if high { (address >> 32) as u32 } else { address as u32 };
        bytes[at..at + 4].copy_from_slice(&half.to_le_bytes());
    }
    Ok(())
}
