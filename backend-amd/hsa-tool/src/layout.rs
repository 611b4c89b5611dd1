//! The HSA runtime's API table as the tool relies on it: which entries it
//! calls or replaces, where each lies, and which runtimes lay the tables out
//! that way. Facts only, read from `hsa_api_trace.h` of ROCm's releases
//! (the test `tests/table_layout.rs` checks them against the headers it is
//! given); no memory is touched here.
//!
//! Every table starts with its version, `ApiTableVersion` (`major_id`,
//! `minor_id`, `step_id`, `reserved`: 16 bytes), whose `minor_id` is the
//! table's size in bytes (the runtime sets it to `sizeof` the table). The
//! root table (`HsaApiTable`) holds pointers to the core table
//! (`CoreApiTable`, at byte 16) and the AMD extension table (`AmdExtTable`,
//! at byte 24). A runtime is accepted only when each table's major version
//! and size is one a release was seen to use: ROCm 5.6 moved the queue
//! interception entries without changing the major version, so a size
//! never seen is refused, never guessed.

/// Bytes of `ApiTableVersion` at the start of every table.
pub const VERSION_BYTES: usize = 16;
/// Offset of `core_` in the root table.
pub const ROOT_CORE: usize = 16;
/// Offset of `amd_ext_` in the root table.
pub const ROOT_AMD_EXT: usize = 24;

/// The tables the tool uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// `HsaApiTable`.
    Root,
    /// `CoreApiTable`.
    Core,
    /// `AmdExtTable`.
    AmdExt,
}

impl Table {
    /// The struct's name in `hsa_api_trace.h`.
    pub fn c_name(self) -> &'static str {
        match self {
            Table::Root => "HsaApiTable",
            Table::Core => "CoreApiTable",
            Table::AmdExt => "AmdExtTable",
        }
    }
}

/// One table version as the runtime states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    pub major: u32,
    /// The table's size in bytes.
    pub minor: u32,
    pub step: u32,
}

/// Every table entry the tool calls or replaces (`*_fn` fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entry {
    AgentGetInfo,
    QueueCreate,
    AgentIterateRegions,
    RegionGetInfo,
    MemoryAllocate,
    SignalCreate,
    SignalDestroy,
    SignalLoadScacquire,
    SignalSubtractScrelease,
    CodeObjectDeserialize,
    ExecutableDestroy,
    ExecutableLoadCodeObject,
    ExecutableFreeze,
    ExecutableGetInfo,
    ExecutableSymbolGetInfo,
    ExecutableIterateSymbols,
    ReaderCreateFromFile,
    ReaderCreateFromMemory,
    ReaderDestroy,
    ExecutableCreateAlt,
    ExecutableLoadProgramCodeObject,
    ExecutableLoadAgentCodeObject,
    ExecutableGetSymbolByName,
    QueueInterceptCreate,
    QueueInterceptRegister,
}

impl Entry {
    pub const ALL: [Entry; 25] = [
        Entry::AgentGetInfo,
        Entry::QueueCreate,
        Entry::AgentIterateRegions,
        Entry::RegionGetInfo,
        Entry::MemoryAllocate,
        Entry::SignalCreate,
        Entry::SignalDestroy,
        Entry::SignalLoadScacquire,
        Entry::SignalSubtractScrelease,
        Entry::CodeObjectDeserialize,
        Entry::ExecutableDestroy,
        Entry::ExecutableLoadCodeObject,
        Entry::ExecutableFreeze,
        Entry::ExecutableGetInfo,
        Entry::ExecutableSymbolGetInfo,
        Entry::ExecutableIterateSymbols,
        Entry::ReaderCreateFromFile,
        Entry::ReaderCreateFromMemory,
        Entry::ReaderDestroy,
        Entry::ExecutableCreateAlt,
        Entry::ExecutableLoadProgramCodeObject,
        Entry::ExecutableLoadAgentCodeObject,
        Entry::ExecutableGetSymbolByName,
        Entry::QueueInterceptCreate,
        Entry::QueueInterceptRegister,
    ];

    /// The table holding the entry.
    pub fn table(self) -> Table {
        match self {
            Entry::QueueInterceptCreate | Entry::QueueInterceptRegister => Table::AmdExt,
            _ => Table::Core,
        }
    }

    /// The field's name in `hsa_api_trace.h`.
    pub fn field(self) -> &'static str {
        match self {
            Entry::AgentGetInfo => "hsa_agent_get_info_fn",
            Entry::QueueCreate => "hsa_queue_create_fn",
            Entry::AgentIterateRegions => "hsa_agent_iterate_regions_fn",
            Entry::RegionGetInfo => "hsa_region_get_info_fn",
            Entry::MemoryAllocate => "hsa_memory_allocate_fn",
            Entry::SignalCreate => "hsa_signal_create_fn",
            Entry::SignalDestroy => "hsa_signal_destroy_fn",
            Entry::SignalLoadScacquire => "hsa_signal_load_scacquire_fn",
            Entry::SignalSubtractScrelease => "hsa_signal_subtract_screlease_fn",
            Entry::CodeObjectDeserialize => "hsa_code_object_deserialize_fn",
            Entry::ExecutableDestroy => "hsa_executable_destroy_fn",
            Entry::ExecutableLoadCodeObject => "hsa_executable_load_code_object_fn",
            Entry::ExecutableFreeze => "hsa_executable_freeze_fn",
            Entry::ExecutableGetInfo => "hsa_executable_get_info_fn",
            Entry::ExecutableSymbolGetInfo => "hsa_executable_symbol_get_info_fn",
            Entry::ExecutableIterateSymbols => "hsa_executable_iterate_symbols_fn",
            Entry::ReaderCreateFromFile => "hsa_code_object_reader_create_from_file_fn",
            Entry::ReaderCreateFromMemory => "hsa_code_object_reader_create_from_memory_fn",
            Entry::ReaderDestroy => "hsa_code_object_reader_destroy_fn",
            Entry::ExecutableCreateAlt => "hsa_executable_create_alt_fn",
            Entry::ExecutableLoadProgramCodeObject => "hsa_executable_load_program_code_object_fn",
            Entry::ExecutableLoadAgentCodeObject => "hsa_executable_load_agent_code_object_fn",
            Entry::ExecutableGetSymbolByName => "hsa_executable_get_symbol_by_name_fn",
            Entry::QueueInterceptCreate => "hsa_amd_queue_intercept_create_fn",
            Entry::QueueInterceptRegister => "hsa_amd_queue_intercept_register_fn",
        }
    }

    /// Byte offset of the entry in the core table: the same in every
    /// release the tool knows (ROCm 4.5 to 7.0: `CoreApiTable` is 1016
    /// bytes in all of them, entries in the same order).
    fn core_offset(self) -> Option<usize> {
        Some(match self {
            Entry::AgentGetInfo => 64,
            Entry::QueueCreate => 72,
            Entry::AgentIterateRegions => 232,
            Entry::RegionGetInfo => 240,
            Entry::MemoryAllocate => 280,
            Entry::SignalCreate => 312,
            Entry::SignalDestroy => 320,
            Entry::SignalLoadScacquire => 336,
            Entry::SignalSubtractScrelease => 552,
            Entry::CodeObjectDeserialize => 632,
            Entry::ExecutableDestroy => 688,
            Entry::ExecutableLoadCodeObject => 696,
            Entry::ExecutableFreeze => 704,
            Entry::ExecutableGetInfo => 712,
            Entry::ExecutableSymbolGetInfo => 760,
            Entry::ExecutableIterateSymbols => 768,
            Entry::ReaderCreateFromFile => 936,
            Entry::ReaderCreateFromMemory => 944,
            Entry::ReaderDestroy => 952,
            Entry::ExecutableCreateAlt => 960,
            Entry::ExecutableLoadProgramCodeObject => 968,
            Entry::ExecutableLoadAgentCodeObject => 976,
            Entry::ExecutableGetSymbolByName => 992,
            Entry::QueueInterceptCreate | Entry::QueueInterceptRegister => return None,
        })
    }
}

/// One way the runtime's tables are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Which releases use it (where the facts come from).
    pub releases: &'static str,
    /// (major version, size in bytes) of the root table this layout takes.
    pub root: &'static [(u32, u32)],
    /// The same for the core table.
    pub core: &'static [(u32, u32)],
    /// The same for the AMD extension table.
    pub amd_ext: &'static [(u32, u32)],
    /// Offset of `hsa_amd_queue_intercept_create_fn` (`_register_fn` follows it).
    pub intercept_create: usize,
}

impl Layout {
    /// Byte offset of `entry` in its table.
    pub fn offset(&self, entry: Entry) -> usize {
        match entry.core_offset() {
            Some(o) => o,
            None if entry == Entry::QueueInterceptCreate => self.intercept_create,
            None => self.intercept_create + 8,
        }
    }

    /// Whether a runtime stating these versions lays its tables out this way.
    pub fn matches(&self, root: Version, core: Version, amd_ext: Version) -> bool {
        let known = |list: &[(u32, u32)], v: Version| list.contains(&(v.major, v.minor));
        known(self.root, root) && known(self.core, core) && known(self.amd_ext, amd_ext)
    }
}

/// The layouts of ROCm's releases, read from `hsa_api_trace.h` of
/// ROCR-Runtime's tags rocm-4.5.2 to rocm-6.2.4 and its history to
/// 2024-10, and of the runtime in ROCm/rocm-systems as of 2025-08.
pub const KNOWN_LAYOUTS: [Layout; 3] = [
    Layout {
        releases: "ROCm 4.5 to 5.5",
        root: &[(1, 48)],
        core: &[(1, 1016)],
        // 5.5 appended three entries to the 4.5-5.4 table
        amd_ext: &[(1, 400), (1, 424)],
        intercept_create: 296,
    },
    Layout {
        releases: "ROCm 5.6 and 5.7",
        root: &[(1, 48)],
        core: &[(1, 1016)],
        amd_ext: &[(1, 456)],
        intercept_create: 312,
    },
    Layout {
        releases: "ROCm 6.0 to 7.0",
        // the tools table (56) and the PC sampling table (64) were appended
        root: &[(2, 48), (3, 56), (3, 64)],
        core: &[(2, 1016)],
        // since 6.0 each new entry is appended and raises the step: steps 0
        // to 4 (552 to 584 bytes) in ROCR-Runtime's history, step 7 (608)
        // in the 2025 runtime; steps 5 and 6 lie between tables that agree
        // on every entry before byte 552
        amd_ext: &[(2, 552), (2, 560), (2, 568), (2, 576), (2, 584), (2, 592), (2, 600), (2, 608)],
        intercept_create: 312,
    },
];

/// The layout of a runtime stating these versions, or why it is refused
/// (one line).
pub fn choose(root: Version, core: Version, amd_ext: Version) -> Result<&'static Layout, String> {
    if let Some(l) = KNOWN_LAYOUTS.iter().find(|l| l.matches(root, core, amd_ext)) {
        return Ok(l);
    }
    let show = |t: Table, v: Version| format!("{} {}.{} ({} bytes)", t.c_name(), v.major, v.step, v.minor);
    Err(format!(
        "the HSA runtime's API tables are of a layout this xfpx does not know ({}, {}, {}; known: {})",
        show(Table::Root, root),
        show(Table::Core, core),
        show(Table::AmdExt, amd_ext),
        KNOWN_LAYOUTS.iter().map(|l| l.releases).collect::<Vec<_>>().join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32) -> Version {
        Version { major, minor, step: 0 }
    }

    #[test]
    fn releases_choose_their_layout() {
        let rocm52 = choose(v(1, 48), v(1, 1016), v(1, 400)).expect("5.2");
        assert_eq!(rocm52.offset(Entry::QueueInterceptCreate), 296);
        assert_eq!(rocm52.offset(Entry::QueueInterceptRegister), 304);
        assert_eq!(rocm52.offset(Entry::QueueCreate), 72);
        let rocm57 = choose(v(1, 48), v(1, 1016), v(1, 456)).expect("5.7");
        assert_eq!(rocm57.offset(Entry::QueueInterceptRegister), 320);
        let rocm63 = choose(v(3, 64), v(2, 1016), v(2, 584)).expect("6.3");
        assert_eq!(rocm63.offset(Entry::QueueInterceptCreate), 312);
    }

    #[test]
    fn unknown_layouts_are_refused_in_one_line() {
        for (root, core, amd) in [
            (v(1, 48), v(1, 1016), v(1, 432)),
            (v(4, 64), v(2, 1016), v(2, 584)),
            (v(3, 64), v(2, 1024), v(2, 584)),
            (v(1, 48), v(2, 1016), v(1, 400)),
        ] {
            let e = choose(root, core, amd).expect_err("unknown");
            assert!(e.contains("does not know") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn every_entry_has_one_offset_inside_its_table() {
        for l in &KNOWN_LAYOUTS {
            for e in Entry::ALL {
                let size = match e.table() {
                    Table::Core => l.core.iter().map(|c| c.1).min(),
                    _ => l.amd_ext.iter().map(|c| c.1).min(),
                };
                let o = l.offset(e);
                assert!(o >= VERSION_BYTES && o % 8 == 0 && (o + 8) as u32 <= size.unwrap_or(0), "{e:?} in {l:?}");
            }
        }
    }
}
