//! A placed rewrite waiting for its table's address: [`Prepared`] holds
//! the rewritten file, laid out and checked, whose code loads the table's
//! address from literals not yet written (or already written, where the
//! address was known); [`Prepared::emit`] writes the address and makes
//! the outcome (its listings render when read). A replay asks Prepared how large the table is, allocates it
//! where the run will find it, and emits once with that address. With a
//! patchable table, the file also carries the rewrite's record
//! ([`super::record`]), so that it can be placed again (otherwise the
//! record is made only when asked for).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use xfpx_amd_isa::Target;
use xfpx_common::site::SiteTable;

use super::listing::{anchor_line, listing, Rendered};
use super::lower::Appended;
use super::outcome::{ListingLine, Mode, RewriteError, RewriteOptions, RewriteOutcome};
use super::placement::{Placed, UnitCode};
use super::prepare::Units;
use super::record::{self, LiteralAt, RecordedKernel, RewriteRecord, RECORD_FORMAT, RECORD_SECTION};
use super::table::TableAddress;
use super::units::Decoded;
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
    /// Made when the object carries it (a patchable table) or when asked.
    record: OnceLock<RewriteRecord>,
    /// How the counters of each counted kernel and device function fold.
    count_layouts: Vec<xfpx_common::counters::CountLayout>,
}

impl Prepared {
    /// Gives each unit the lines of what placement overwrote (rendered
    /// when read), records a patchable object's instrumentation in it, and
    /// checks that the file reads back.
    pub(super) fn new(units: Units<'_>, mut placed: Placed, opts: &RewriteOptions) -> Result<Prepared, RewriteError> {
        let target = units.target;
        // A site's anchor line also says how it reaches its trampoline.
        let anchors = |code: &mut UnitCode, instrs: Decoded| {
            let patches = std::mem::take(&mut code.anchors);
            let reach: BTreeMap<u64, _> = code.reach.iter().copied().collect();
            Rendered::later(move || {
                let mut lines: Vec<_> = patches.iter().map(|a| anchor_line(target, &instrs, a)).collect();
                for l in &mut lines {
                    l.reach = reach.get(&l.address).copied();
                }
                lines
            })
        };
        for k in &units.kernels {
            placed.kernels[k.index].anchors = anchors(&mut placed.kernel_code[k.index], k.instrs.clone());
        }
        for f in &units.functions {
            placed.functions[f.index].anchors = anchors(&mut placed.function_code[f.index], f.instrs.clone());
        }
        let appended = &placed.appended;
        let literals: Vec<LiteralAt> = appended
            .table_literals
            .iter()
            .map(|l| LiteralAt { address: appended.base + 4 * l.word as u64, high: l.high })
            .collect();
        let record = OnceLock::new();
        if opts.table == TableAddress::Patchable {
            let made = make_record(opts.mode, target, &placed, &units.sites, &literals, &units.notes);
            let bytes = std::mem::take(&mut placed.bytes);
            placed.bytes = builder::append_section(bytes, RECORD_SECTION, &made.to_bytes())?;
            let _ = record.set(made);
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
            .chain(units.functions.iter().chain(&units.clonable).filter_map(|f| f.counts.clone()))
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
        self.record
            .get_or_init(|| make_record(self.mode, self.target, &self.placed, &self.sites, &self.literals, &self.notes))
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
    pub fn emit(self, table_address: u64) -> Result<RewriteOutcome, RewriteError> {
        if let Some(known) = self.known_table_address().filter(|&a| a != table_address) {
            return Err(RewriteError::Layout(format!(
                "the code was placed for a table at {known:#x}, not at {table_address:#x}"
            )));
        }
        let mut placed = self.placed;
        record::write_table_address(&mut placed.bytes, &self.literals, table_address)?;
        placed.appended.set_table_address(table_address);
        let code_bytes = 4 * placed.appended.words.len() as u64;
        // Each unit's listing, rendered when read.
        let (target, appended) = (self.target, Arc::new(std::mem::replace(&mut placed.appended, Appended::new(0))));
        let listed = |words: &Option<Range<usize>>| match words {
            Some(words) => {
                let (appended, words) = (appended.clone(), words.clone());
                Rendered::later(move || unit_listing(target, &appended, words.clone()))
            }
            None => Rendered::default(),
        };
        for (o, code) in placed.kernels.iter_mut().zip(&placed.kernel_code) {
            o.appended = listed(&code.words);
        }
        for (o, code) in placed.functions.iter_mut().zip(&placed.function_code) {
            o.appended = listed(&code.words);
        }
        Ok(RewriteOutcome {
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

/// The record of a rewrite placed as `placed`.
fn make_record(
    mode: Mode,
    target: Target,
    placed: &Placed,
    sites: &SiteTable,
    literals: &[LiteralAt],
    notes: &[String],
) -> RewriteRecord {
    RewriteRecord {
        format: RECORD_FORMAT,
        mode,
        target: target.name().to_string(),
        table: placed.table.clone(),
        sites: sites.iter().map(|(_, info)| info.clone()).collect(),
        table_address_literals: literals.to_vec(),
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
        notes: notes.to_vec(),
    }
}

/// The listing of a unit's appended `words`, less the relay zones reserved among them.
fn unit_listing(target: Target, appended: &Appended, words: Range<usize>) -> Vec<ListingLine> {
    let word = |a: u64| ((a - appended.base) / 4) as usize;
    let mut out = Vec::new();
    let mut from = words.start;
    for z in &appended.zones {
        let (zs, ze) = (word(z.start), word(z.end));
        if ze <= from || zs >= words.end {
            continue;
        }
        if zs > from {
            out.extend(listing(target, appended, from..zs));
        }
        from = ze;
    }
    if from < words.end {
        out.extend(listing(target, appended, from..words.end));
    }
    out
}
