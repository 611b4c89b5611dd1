//! A placed rewrite waiting for its table's address: [`Prepared`] holds
//! the rewritten file, laid out and checked, whose code loads the table's
//! address from literals not yet written (or already written, where the
//! address was known); [`Prepared::emit`] writes the address and renders
//! the outcome. A replay asks Prepared how large the table is, allocates it
//! where the run will find it, and emits once with that address. With a
//! patchable table, the file also carries the rewrite's record
//! ([`super::record`]), so that it can be placed again.

use xfpx_amd_isa::Target;
use xfpx_common::site::SiteTable;

use super::listing::{anchor_line, listing};
use super::outcome::{Mode, RewriteError, RewriteOptions, RewriteOutcome};
use super::placement::Placed;
use super::prepare::Units;
use super::record::{self, LiteralAt, RecordedKernel, RewriteRecord, RECORD_FORMAT, RECORD_SECTION};
use super::table::TableAddress;
use crate::builder;
use crate::code_object::CodeObject;

/// A rewrite placed and laid out, but for the table's address.
#[derive(Debug)]
pub struct Prepared {
    target: Target,
    mode: Mode,
    table_address: TableAddress,
    placed: Placed,
    sites: SiteTable,
    notes: Vec<String>,
    /// Where the table's address goes.
    literals: Vec<LiteralAt>,
    record: RewriteRecord,
    /// How the counters of each counted kernel and device function fold.
    count_layouts: Vec<xfpx_common::counters::CountLayout>,
}

impl Prepared {
    /// Renders what placement overwrote, records a patchable object's
    /// instrumentation in it, and checks that the file reads back.
    pub(super) fn new(units: Units<'_>, mut placed: Placed, opts: &RewriteOptions) -> Result<Prepared, RewriteError> {
        let target = units.target;
        for k in &units.kernels {
            let anchors = &placed.kernel_code[k.index].anchors;
            placed.kernels[k.index].anchors = anchors.iter().map(|a| anchor_line(target, &k.instrs, a)).collect();
        }
        for f in &units.functions {
            let anchors = &placed.function_code[f.index].anchors;
            placed.functions[f.index].anchors = anchors.iter().map(|a| anchor_line(target, &f.instrs, a)).collect();
        }
        let appended = &placed.appended;
        let literals: Vec<LiteralAt> = appended
            .table_literals
            .iter()
            .map(|l| LiteralAt { address: appended.base + 4 * l.word as u64, high: l.high })
            .collect();
        let record = RewriteRecord {
            format: RECORD_FORMAT,
            mode: opts.mode,
            target: target.name().to_string(),
            table: placed.table.clone(),
            sites: units.sites.iter().map(|(_, info)| info.clone()).collect(),
            table_address_literals: literals.clone(),
            kernels: placed
                .kernels
                .iter()
                .map(|k| RecordedKernel {
                    name: k.name.clone(),
                    state: k.state.clone(),
                    probes: k.probes,
                    waits_added: k.waits_added,
                    coverage: k.coverage.clone(),
                })
                .collect(),
            notes: units.notes.clone(),
        };
        if opts.table == TableAddress::Patchable {
            let bytes = std::mem::take(&mut placed.bytes);
            placed.bytes = builder::append_section(bytes, RECORD_SECTION, &record.to_bytes())?;
        }
        // The result must read back as a code object with the same kernels.
        let check = CodeObject::parse(&placed.bytes)
            .map_err(|e| RewriteError::Layout(format!("rewritten object does not parse: {e}")))?;
        if check.kernels.len() != units.co.kernels.len() {
            return Err(RewriteError::Layout("rewritten object lost kernels".into()));
        }
        let count_layouts = units
            .kernels
            .iter()
            .filter_map(|k| k.counts.clone())
            .chain(units.functions.iter().filter_map(|f| f.counts.clone()))
            .collect();
        Ok(Prepared {
            count_layouts,
            target,
            mode: opts.mode,
            table_address: opts.table,
            placed,
            sites: units.sites,
            notes: units.notes,
            literals,
            record,
        })
    }

    /// What the rewrite did, as a patchable object records it.
    pub fn record(&self) -> &RewriteRecord {
        &self.record
    }

    /// How the counters of each counted kernel and device function fold
    /// (empty unless prepared for the counters).
    pub fn count_layouts(&self) -> &[xfpx_common::counters::CountLayout] {
        &self.count_layouts
    }

    /// Where every kernel and device function stands after placement
    /// (instrumented or not, with the sites refused).
    pub fn outcomes(&self) -> (&[super::KernelOutcome], &[super::FunctionOutcome]) {
        (&self.placed.kernels, &self.placed.functions)
    }

    /// Bytes the table needs.
    pub fn table_bytes(&self) -> u64 {
        self.placed.table.bytes()
    }

    /// The table's address, where it was known before placement.
    pub fn known_table_address(&self) -> Option<u64> {
        match self.table_address {
            TableAddress::Known(a) => Some(a),
            TableAddress::Patchable => None,
        }
    }

    /// The rewritten object with its table at `table_address` (for code
    /// placed with a known address, that address).
    pub fn emit(mut self, table_address: u64) -> Result<RewriteOutcome, RewriteError> {
        if let Some(known) = self.known_table_address().filter(|&a| a != table_address) {
            return Err(RewriteError::Layout(format!(
                "the code was placed for a table at {known:#x}, not at {table_address:#x}"
            )));
        }
        let placed = &mut self.placed;
        record::write_table_address(&mut placed.bytes, &self.literals, table_address)?;
        placed.appended.set_table_address(table_address);
        for (o, code) in placed.kernels.iter_mut().zip(&placed.kernel_code) {
            if let Some(words) = &code.words {
                o.appended = listing(self.target, &placed.appended, words.clone());
            }
        }
        for (o, code) in placed.functions.iter_mut().zip(&placed.function_code) {
            if let Some(words) = &code.words {
                o.appended = listing(self.target, &placed.appended, words.clone());
            }
        }
        let code_bytes = 4 * placed.appended.words.len() as u64;
        let placed = self.placed;
        Ok(RewriteOutcome {
            site_list: self.sites.iter().map(|(_, info)| info.clone()).collect(),
            bytes: placed.bytes,
            sites: self.sites,
            target: self.target.name().to_string(),
            mode: self.mode,
            strategy: (code_bytes > 0).then_some(placed.region.strategy),
            appended_at: (code_bytes > 0).then_some(placed.region.start),
            appended_bytes: code_bytes,
            table_address,
            table: placed.table,
            kernels: placed.kernels,
            functions: placed.functions,
            notes: self.notes,
        })
    }
}
