//! The prefill's batched disassembly: functions laid end to end, up to
//! [`MAX_BATCH_BYTES`], go through one run of the real disassembler, and
//! [`crate::disasm_split`] cuts its listing into the answer NVBit's call
//! for each function would get; each answer is filed in the cache under
//! the key of that call ([`DisasmCache::key`]: the function's bytes as
//! NVBit hands them over, i.e. its `.text.<name>` section; sections are
//! whole 16-byte instructions, so the concatenation needs no padding).
//!
//! Safe beside NVBit and other processes (MPI ranks) filling the same
//! cache: a function is batched only under a busy mark this process took
//! ([`DisasmCache::claim`]), so a call for it meanwhile waits for the
//! answer; cached functions are skipped, functions another process is
//! disassembling are left to it. A function the splitter refuses, or a
//! batch whose run fails, goes back to the caller to be disassembled alone
//! through the wrapper.

use crate::disasm_cache::{Claim, DisasmCache};
use crate::disasm_split::{self, INSTRUCTION_BYTES, MAX_BATCH_BYTES};
use crate::fatbin::DeviceFunction;
use std::path::Path;
use std::process::{Command, Stdio};

/// The first SASS target whose instructions are 16 bytes each.
const FIRST_16_BYTE_TARGET: u32 = 70;

/// The planned functions in groups, in plan order: each group one
/// disassembler run. Functions that cannot share a run (another
/// instruction size, over [`MAX_BATCH_BYTES`]) are groups of one.
pub fn groups(functions: &[DeviceFunction], sm: u32) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut bytes = 0u64;
    for (i, f) in functions.iter().enumerate() {
        let size = f.code.len() as u64;
        let batchable =
            sm >= FIRST_16_BYTE_TARGET && size > 0 && size.is_multiple_of(INSTRUCTION_BYTES) && size <= MAX_BATCH_BYTES;
        match out.last_mut() {
            Some(g) if batchable && bytes + size <= MAX_BATCH_BYTES => {
                g.push(i);
                bytes += size;
            }
            _ => {
                out.push(vec![i]);
                bytes = if batchable { size } else { MAX_BATCH_BYTES };
            }
        }
    }
    out
}

/// What one group's batch did.
#[derive(Debug, Default)]
pub struct BatchOutcome<'f> {
    /// Functions answered: from the cache, or filed from the batch's run.
    pub answered: usize,
    /// Whether the real disassembler ran.
    pub ran: bool,
    /// Functions to disassemble alone.
    pub alone: Vec<&'f DeviceFunction>,
}

/// Disassemble `group` in one run of the real disassembler with
/// `options` (NVBit's), through the scratch file `file`, filing each
/// function's answer in `cache`; `tag` is the cache's [`DisasmCache::tag`].
pub fn run_group<'f>(
    cache: &DisasmCache,
    tag: &str,
    options: &[String],
    group: &[&'f DeviceFunction],
    file: &Path,
) -> BatchOutcome<'f> {
    let mut out = BatchOutcome::default();
    let mut mine = Vec::new();
    for &f in group {
        let key = DisasmCache::key(tag, options, &f.code);
        match cache.claim(&key) {
            Claim::Cached => out.answered += 1,
            Claim::Busy => out.alone.push(f),
            Claim::Mine(mark) => mine.push((f, key, mark)),
        }
    }
    if mine.len() < 2 {
        out.alone.extend(mine.into_iter().map(|(f, _, _)| f));
        return out;
    }
    let code: Vec<u8> = mine.iter().flat_map(|(f, _, _)| f.code.iter().copied()).collect();
    let listing = std::fs::write(file, &code).ok().and_then(|()| {
        out.ran = true;
        let run = Command::new(&cache.real)
            .args(options)
            .arg(file)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        String::from_utf8(run.stdout).ok()
    });
    let sizes: Vec<u64> = mine.iter().map(|(f, _, _)| f.code.len() as u64).collect();
    let Some(Ok(parts)) = listing.map(|l| disasm_split::split(&l, &sizes)) else {
        out.alone.extend(mine.into_iter().map(|(f, _, _)| f));
        return out;
    };
    for ((f, key, mark), part) in mine.into_iter().zip(parts) {
        match part.map(|text| cache.store(&key, text.as_bytes())) {
            Ok(Ok(())) => out.answered += 1,
            _ => out.alone.push(f),
        }
        drop(mark);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(size: usize) -> DeviceFunction {
        DeviceFunction { name: format!("f{size}"), code: vec![0; size] }
    }

    #[test]
    fn groups_stay_within_the_batch_limit() {
        let fs: Vec<DeviceFunction> =
            [0x8000, 0x8000, 0x10, 0x2_0000, 0x18, 0x100, 0x0].into_iter().map(function).collect();
        assert_eq!(groups(&fs, 90), vec![vec![0, 1], vec![2], vec![3], vec![4], vec![5], vec![6]]);
        let small: Vec<DeviceFunction> = [0x100, 0x200, 0x300].into_iter().map(function).collect();
        assert_eq!(groups(&small, 90), vec![vec![0, 1, 2]]);
        // 8-byte instructions (before Volta): one run each
        assert_eq!(groups(&small, 61), vec![vec![0], vec![1], vec![2]]);
    }
}
