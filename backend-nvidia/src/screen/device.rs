//! What the screen shares with the device, in the layout of
//! `asm-snippets/nvidia/xfpx_layout.h` (a test holds these to that
//! header): the description of one scan launch the shim passes to the
//! tool's scan kernel, the records the scan sends when a count grows, and
//! the scan's grid.

use xfpx_common::class::FpFormat;

/// Buffers one scan launch reads at most.
pub const MAX_BUFFERS: usize = 16;
/// Counters on the device: one per (allocation, format) screened.
pub const SLOTS: u32 = 65536;
/// Scratch entries (one per scan in flight; reused in turn).
pub const SCRATCH: u32 = 1024;
/// Records in the screen's ring.
pub const RING_CAPACITY: u32 = 4096;
/// Threads per block of the scan.
pub const THREADS: u32 = 256;
/// Bytes of one record.
pub const RECORD_SIZE: usize = 64;
/// Blocks of one scan at most, over all its buffers.
pub const MAX_BLOCKS: u32 = 2048;
/// 16-byte chunks each thread reads at least before more blocks are used.
const CHUNKS_PER_THREAD: u64 = 4;

/// One buffer of a scan (`XfpxScreenBuffer`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScreenBuffer {
    /// Device address (16-byte aligned) and size of the allocation.
    pub base: u64,
    pub bytes: u64,
    /// The device counter of (allocation, format).
    pub slot: u32,
    /// The kernel parameter that pointed into it.
    pub param: u16,
    /// `XFPX_FMT_*` code of the reading (f16, bf16, f32 or f64).
    pub format: u8,
    pub reserved: u8,
}

/// One scan launch (`XfpxScreenLaunch`), passed to the scan kernel by value.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScreenLaunch {
    /// Launch serial of the program's launch it follows (or precedes).
    pub serial: u32,
    /// 1: send a record when a count grew; 0: only set the counts.
    pub report: u32,
    /// The scratch entry this scan uses.
    pub scratch: u32,
    /// Buffers used in `buffer` (0: no scan).
    pub count: u32,
    /// Blocks per buffer (the grid is `grid_x` by `count`).
    pub grid_x: u32,
    pub reserved: u32,
    pub buffer: [ScreenBuffer; MAX_BUFFERS],
}

/// The scans of one launch (`XfpxScreenPlan`): one before it (only for
/// buffers no scan has counted yet, so that the scan after it compares
/// with their contents just before), one after it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScreenPlan {
    pub before: ScreenLaunch,
    pub after: ScreenLaunch,
}

impl ScreenLaunch {
    /// A scan of `buffers` (at most [`MAX_BUFFERS`]) with its grid.
    pub fn new(serial: u64, report: bool, scratch: u32, buffers: &[ScreenBuffer]) -> ScreenLaunch {
        let mut l = ScreenLaunch {
            serial: serial as u32,
            report: u32::from(report),
            scratch,
            count: buffers.len().min(MAX_BUFFERS) as u32,
            ..ScreenLaunch::default()
        };
        for (slot, b) in l.buffer.iter_mut().zip(buffers) {
            *slot = *b;
        }
        l.grid_x = grid_x(&l.buffer[..l.count as usize]);
        l
    }

    /// The buffers in use.
    pub fn buffers(&self) -> &[ScreenBuffer] {
        &self.buffer[..(self.count as usize).min(MAX_BUFFERS)]
    }
}

/// Blocks per buffer: enough that each thread reads a few 16-byte chunks
/// of the largest buffer, at most [`MAX_BLOCKS`] over all buffers.
pub fn grid_x(buffers: &[ScreenBuffer]) -> u32 {
    let Some(largest) = buffers.iter().map(|b| b.bytes / 16).max() else { return 0 };
    let per_block = u64::from(THREADS) * CHUNKS_PER_THREAD;
    let wanted = largest.div_ceil(per_block).max(1);
    let cap = u64::from(MAX_BLOCKS / buffers.len() as u32).max(1);
    wanted.min(cap) as u32
}

/// A record of the screen's ring (`XfpxScreenRecord`): a scan found more
/// NaN or infinite values in a buffer than its counter held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenRecord {
    /// Publication number: slot + 1.
    pub seq: u32,
    /// Launch serial (low 32 bits) the scan followed.
    pub serial: u32,
    /// Launch serial of the scan before it of the same counter.
    pub previous: u32,
    pub param: u16,
    pub format: FpFormat,
    pub nan_before: u64,
    pub nan_after: u64,
    pub inf_before: u64,
    pub inf_after: u64,
    /// Lowest element index holding a NaN or infinite value.
    pub first: Option<u64>,
    pub bytes: u64,
}

/// A screen record that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScreenRecordError {
    #[error("screen record of {0} bytes, expected {RECORD_SIZE}")]
    Size(usize),
    #[error("screen record with format code {0}, not a reading")]
    Format(u8),
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

impl ScreenRecord {
    pub fn decode(b: &[u8]) -> Result<ScreenRecord, ScreenRecordError> {
        if b.len() != RECORD_SIZE {
            return Err(ScreenRecordError::Size(b.len()));
        }
        let code = b[14];
        let format = FpFormat::from_code(code)
            .filter(|f| crate::screen::reading::READINGS.contains(f))
            .ok_or(ScreenRecordError::Format(code))?;
        let first = u64_at(b, 48);
        Ok(ScreenRecord {
            seq: u32_at(b, 0),
            serial: u32_at(b, 4),
            previous: u32_at(b, 8),
            param: u16::from_le_bytes([b[12], b[13]]),
            format,
            nan_before: u64_at(b, 16),
            nan_after: u64_at(b, 24),
            inf_before: u64_at(b, 32),
            inf_after: u64_at(b, 40),
            first: (first != u64::MAX).then_some(first),
            bytes: u64_at(b, 56),
        })
    }

    /// The encoding the device writes (for tests).
    pub fn encode(&self) -> [u8; RECORD_SIZE] {
        let mut out = [0u8; RECORD_SIZE];
        out[0..4].copy_from_slice(&self.seq.to_le_bytes());
        out[4..8].copy_from_slice(&self.serial.to_le_bytes());
        out[8..12].copy_from_slice(&self.previous.to_le_bytes());
        out[12..14].copy_from_slice(&self.param.to_le_bytes());
        out[14] = self.format.code();
        for (i, v) in [
            self.nan_before,
            self.nan_after,
            self.inf_before,
            self.inf_after,
            self.first.unwrap_or(u64::MAX),
            self.bytes,
        ]
        .into_iter()
        .enumerate()
        {
            out[16 + 8 * i..24 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> &'static str {
        xfpx_asm_snippets::NVIDIA_LAYOUT_HEADER
    }

    fn define(name: &str) -> u64 {
        let line = header()
            .lines()
            .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("{name} not in xfpx_layout.h"));
        let v = line.split_whitespace().nth(2).expect("a value").trim_end_matches('u');
        v.parse().unwrap_or_else(|_| panic!("{name}: {v}"))
    }

    /// The fields of `typedef struct NAME { ... } NAME;` in the header, as
    /// (type, name) in order.
    fn fields(name: &str) -> Vec<(String, String)> {
        let h = header();
        let start = h.find(&format!("typedef struct {name} {{")).unwrap_or_else(|| panic!("{name} not in header"));
        let body = &h[start..];
        let body = &body[body.find('{').expect("brace") + 1..body.find('}').expect("brace")];
        body.lines()
            .map(|l| l.split("/*").next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .flat_map(|l| {
                let l = l.trim_end_matches(';');
                let (ty, names) = l.rsplit_once(' ').map(|(t, n)| (t.trim(), n)).expect("type and name");
                let ty = ty.to_string();
                names.split(',').map(move |n| (ty.clone(), n.trim().to_string())).collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn layout_matches_the_device_header() {
        assert_eq!(define("XFPX_SCREEN_MAX_BUFFERS"), MAX_BUFFERS as u64);
        assert_eq!(define("XFPX_SCREEN_SLOTS"), u64::from(SLOTS));
        assert_eq!(define("XFPX_SCREEN_SCRATCH"), u64::from(SCRATCH));
        assert_eq!(define("XFPX_SCREEN_RING"), u64::from(RING_CAPACITY));
        assert_eq!(define("XFPX_SCREEN_THREADS"), u64::from(THREADS));
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter().map(|(t, n)| (t.to_string(), n.to_string())).collect()
        };
        assert_eq!(
            fields("XfpxScreenBuffer"),
            pairs(&[
                ("unsigned long long", "base"),
                ("unsigned long long", "bytes"),
                ("uint32_t", "slot"),
                ("uint16_t", "param"),
                ("uint8_t", "format"),
                ("uint8_t", "reserved"),
            ])
        );
        assert_eq!(std::mem::size_of::<ScreenBuffer>(), 24);
        assert_eq!(
            fields("XfpxScreenLaunch"),
            pairs(&[
                ("uint32_t", "serial"),
                ("uint32_t", "report"),
                ("uint32_t", "scratch"),
                ("uint32_t", "count"),
                ("uint32_t", "grid_x"),
                ("uint32_t", "reserved"),
                ("XfpxScreenBuffer", "buffer[XFPX_SCREEN_MAX_BUFFERS]"),
            ])
        );
        assert_eq!(std::mem::size_of::<ScreenLaunch>(), 24 + 24 * MAX_BUFFERS);
        assert_eq!(fields("XfpxScreenPlan"), pairs(&[("XfpxScreenLaunch", "before"), ("XfpxScreenLaunch", "after")]));
        assert_eq!(
            fields("XfpxScreenRecord"),
            pairs(&[
                ("uint32_t", "seq"),
                ("uint32_t", "serial"),
                ("uint32_t", "previous"),
                ("uint16_t", "param"),
                ("uint8_t", "format"),
                ("uint8_t", "reserved"),
                ("unsigned long long", "nan_before"),
                ("unsigned long long", "nan_after"),
                ("unsigned long long", "inf_before"),
                ("unsigned long long", "inf_after"),
                ("unsigned long long", "first"),
                ("unsigned long long", "bytes"),
            ])
        );
    }

    #[test]
    fn records_round_trip_and_reject_garbage() {
        let r = ScreenRecord {
            seq: 3,
            serial: 5000,
            previous: 4999,
            param: 3,
            format: FpFormat::F32,
            nan_before: 0,
            nan_after: 1,
            inf_before: 2,
            inf_after: 2,
            first: Some(5000),
            bytes: 40_000,
        };
        assert_eq!(ScreenRecord::decode(&r.encode()), Ok(r));
        let none = ScreenRecord { first: None, ..r };
        assert_eq!(ScreenRecord::decode(&none.encode()), Ok(none));
        let mut bad = r.encode();
        bad[14] = FpFormat::F16x2.code();
        assert_eq!(ScreenRecord::decode(&bad), Err(ScreenRecordError::Format(FpFormat::F16x2.code())));
        bad[14] = 99;
        assert!(ScreenRecord::decode(&bad).is_err());
        assert_eq!(ScreenRecord::decode(&[0; 63]), Err(ScreenRecordError::Size(63)));
    }

    #[test]
    fn the_grid_covers_the_largest_buffer_within_the_block_cap() {
        let b = |bytes| ScreenBuffer { bytes, ..ScreenBuffer::default() };
        assert_eq!(grid_x(&[]), 0);
        assert_eq!(grid_x(&[b(4)]), 1, "a buffer smaller than a chunk still gets a block");
        assert_eq!(grid_x(&[b(16 * 1024)]), 1);
        assert_eq!(grid_x(&[b(16 * 1024 + 16)]), 2);
        assert_eq!(grid_x(&[b(65_536), b(40_000)]), 4);
        assert_eq!(grid_x(&[b(1 << 30)]), MAX_BLOCKS);
        assert_eq!(grid_x(&[b(1 << 30); 16]), MAX_BLOCKS / 16);
        let l = ScreenLaunch::new(7, true, 2, &[b(100); 20]);
        assert_eq!((l.count, l.buffers().len(), l.serial, l.report, l.scratch), (16, 16, 7, 1, 2));
    }
}
