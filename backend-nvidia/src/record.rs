//! Decoding what the device sends: new-finding records from the ring and
//! site-table entries, in the layout of `asm-snippets/nvidia/xfpx_layout.h`
//! (a test holds these constants to that header).

use xfpx_common::class::FpFormat;
use xfpx_common::fp::{ExceptionKind, ExceptionKinds};
use xfpx_common::site::SiteId;

/// Sites per chunk of the device site table.
pub const SITES_PER_CHUNK: u32 = 4096;
/// Entries of the chunk directory (covers every 32-bit site id).
pub const DIRECTORY_LEN: u32 = 1 << 20;
/// Records in the ring.
pub const RING_CAPACITY: u32 = 65536;
/// Bytes of one record.
pub const RECORD_SIZE: usize = 16;
/// Bytes of one site entry.
pub const SITE_ENTRY_SIZE: usize = 40;

/// `meta` argument bits of the check function.
pub const META_KINDS_SHIFT: u32 = 8;
pub const META_DIVISION: u32 = 1 << 16;
pub const META_HIGH_WORD: u32 = 1 << 17;
/// The value is the source of a reciprocal; the device reports the kinds
/// of the reciprocal made of it.
pub const META_RECIPROCAL: u32 = 1 << 18;
/// A grouped slot whose instruction was guarded: the device counts it only
/// where predicate `(meta >> META_GUARD_SHIFT) & 7` (negated with
/// [`META_GUARD_NEGATED`]) holds in the call's `preds` argument.
pub const META_GUARDED: u32 = 1 << 19;
pub const META_GUARD_NEGATED: u32 = 1 << 20;
pub const META_GUARD_SHIFT: u32 = 21;

/// A record that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("device record of {0} bytes, expected {RECORD_SIZE}")]
    Size(usize),
    #[error("device record with unknown format code {0}")]
    Format(u8),
    #[error("device record with no exception kind")]
    NoKind,
    #[error("site-table chunk of {0} bytes is not a whole number of entries")]
    ChunkSize(usize),
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from(u32_at(b, i)) | (u64::from(u32_at(b, i + 4)) << 32)
}

/// A new (site, kinds, format) seen on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceRecord {
    pub site: SiteId,
    /// Launch serial number (low 32 bits).
    pub launch: u32,
    pub kinds: ExceptionKinds,
    pub format: FpFormat,
    /// Publication number: slot + 1.
    pub seq: u32,
}

impl DeviceRecord {
    pub fn decode(b: &[u8]) -> Result<DeviceRecord, RecordError> {
        if b.len() != RECORD_SIZE {
            return Err(RecordError::Size(b.len()));
        }
        let info = u32_at(b, 8);
        let kinds = ExceptionKinds((info & 0xf) as u8);
        if kinds.is_empty() {
            return Err(RecordError::NoKind);
        }
        let code = ((info >> 8) & 0xff) as u8;
        let format = FpFormat::from_code(code).ok_or(RecordError::Format(code))?;
        Ok(DeviceRecord { site: SiteId(u32_at(b, 0)), launch: u32_at(b, 4), kinds, format, seq: u32_at(b, 12) })
    }

    /// The encoding the device writes (for tests and tools).
    pub fn encode(&self) -> [u8; RECORD_SIZE] {
        let mut out = [0u8; RECORD_SIZE];
        out[0..4].copy_from_slice(&self.site.0.to_le_bytes());
        out[4..8].copy_from_slice(&self.launch.to_le_bytes());
        let info = u32::from(self.kinds.0) | (u32::from(self.format.code()) << 8);
        out[8..12].copy_from_slice(&info.to_le_bytes());
        out[12..16].copy_from_slice(&self.seq.to_le_bytes());
        out
    }
}

/// One site's entry of the device table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SiteEntry {
    /// Kinds seen, 4 bits per format code.
    pub seen: u32,
    /// The flow tool: a byte per kind (by kind code) of the classes met
    /// (see [`crate::flow::classes_of_byte`]); 0 for the detector.
    pub classes: u32,
    /// Warp executions that raised each kind (by kind code).
    pub counts: [u64; 4],
}

impl SiteEntry {
    pub fn decode(b: &[u8]) -> SiteEntry {
        let mut counts = [0u64; 4];
        for (k, c) in counts.iter_mut().enumerate() {
            *c = u64_at(b, 8 + 8 * k);
        }
        SiteEntry { seen: u32_at(b, 0), classes: u32_at(b, 4), counts }
    }

    /// The classes byte of a kind (the flow tool).
    pub fn classes_of(&self, kind: ExceptionKind) -> u8 {
        (self.classes >> (8 * u32::from(kind.code()))) as u8
    }

    /// Every (kind, format) seen, with the warp executions of that kind.
    pub fn findings(&self) -> Vec<(ExceptionKind, FpFormat, u64)> {
        let mut out = Vec::new();
        for format in FpFormat::ALL {
            let bits = ExceptionKinds(((self.seen >> (4 * u32::from(format.code()))) & 0xf) as u8);
            for kind in bits.iter() {
                out.push((kind, format, self.counts[kind.code() as usize]));
            }
        }
        out
    }
}

/// Decode a chunk of entries whose first site is `first`; returns the
/// sites with anything seen.
pub fn decode_chunk(first: u32, bytes: &[u8]) -> Result<Vec<(SiteId, SiteEntry)>, RecordError> {
    if !bytes.len().is_multiple_of(SITE_ENTRY_SIZE) {
        return Err(RecordError::ChunkSize(bytes.len()));
    }
    Ok(bytes
        .chunks_exact(SITE_ENTRY_SIZE)
        .enumerate()
        .map(|(i, b)| (SiteId(first.wrapping_add(i as u32)), SiteEntry::decode(b)))
        .filter(|(_, e)| e.seen != 0)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_define(name: &str) -> u64 {
        let h = xfpx_asm_snippets::NVIDIA_LAYOUT_HEADER;
        let line = h
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name) && l.starts_with("#define"))
            .unwrap_or_else(|| panic!("{name} not in xfpx_layout.h"));
        let v = line.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
        let v = v.trim_end_matches('u').trim_start_matches('(').trim_end_matches(')');
        if let Some(shift) = v.strip_prefix("1u << ") {
            return 1u64 << shift.trim_end_matches(')').parse::<u64>().expect("shift");
        }
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h.trim_end_matches('u'), 16).expect("hex"),
            None => v.trim_end_matches('u').parse().expect("number"),
        }
    }

    #[test]
    fn constants_match_the_device_header() {
        assert_eq!(header_define("XFPX_SITES_PER_CHUNK"), u64::from(SITES_PER_CHUNK));
        assert_eq!(header_define("XFPX_DIRECTORY_LEN"), u64::from(DIRECTORY_LEN));
        assert_eq!(header_define("XFPX_RING_CAPACITY"), u64::from(RING_CAPACITY));
        assert_eq!(header_define("XFPX_META_KINDS_SHIFT"), u64::from(META_KINDS_SHIFT));
        assert_eq!(header_define("XFPX_META_DIVISION"), u64::from(META_DIVISION));
        assert_eq!(header_define("XFPX_META_HIGH_WORD"), u64::from(META_HIGH_WORD));
        assert_eq!(header_define("XFPX_META_RECIPROCAL"), u64::from(META_RECIPROCAL));
        assert_eq!(header_define("XFPX_META_GUARDED"), u64::from(META_GUARDED));
        assert_eq!(header_define("XFPX_META_GUARD_NEGATED"), u64::from(META_GUARD_NEGATED));
        assert_eq!(header_define("XFPX_META_GUARD_SHIFT"), u64::from(META_GUARD_SHIFT));
        for k in ExceptionKind::ALL {
            let name = format!("XFPX_KIND_{}", k.name().to_uppercase());
            assert_eq!(header_define(&name), u64::from(k.bit()), "{name}");
        }
        for f in FpFormat::ALL {
            let name = format!("XFPX_FMT_{}", f.name().to_uppercase());
            assert_eq!(header_define(&name), u64::from(f.code()), "{name}");
        }
        // the directory covers every 32-bit site id
        assert_eq!(u64::from(SITES_PER_CHUNK) * u64::from(DIRECTORY_LEN), 1u64 << 32);
    }

    #[test]
    fn records_round_trip_and_reject_garbage() {
        let r = DeviceRecord {
            site: SiteId(77),
            launch: 3,
            kinds: ExceptionKinds::NONE.with(ExceptionKind::Nan).with(ExceptionKind::Div0),
            format: FpFormat::F64,
            seq: 9,
        };
        assert_eq!(DeviceRecord::decode(&r.encode()), Ok(r));
        let mut bad = r.encode();
        bad[9] = 42;
        assert_eq!(DeviceRecord::decode(&bad), Err(RecordError::Format(42)));
        bad[8] = 0;
        bad[9] = 4;
        assert_eq!(DeviceRecord::decode(&bad), Err(RecordError::NoKind));
        assert_eq!(DeviceRecord::decode(&[0; 15]), Err(RecordError::Size(15)));
    }

    #[test]
    fn site_entries_list_kinds_by_format() {
        let mut b = vec![0u8; 2 * SITE_ENTRY_SIZE];
        // site 11: f32 (code 4) nan+inf, counts 5 and 2
        let seen: u32 = 0b0011 << 16;
        b[SITE_ENTRY_SIZE..SITE_ENTRY_SIZE + 4].copy_from_slice(&seen.to_le_bytes());
        b[SITE_ENTRY_SIZE + 8..SITE_ENTRY_SIZE + 16].copy_from_slice(&5u64.to_le_bytes());
        b[SITE_ENTRY_SIZE + 16..SITE_ENTRY_SIZE + 24].copy_from_slice(&2u64.to_le_bytes());
        let sites = decode_chunk(10, &b).expect("whole entries");
        assert_eq!(sites.len(), 1);
        assert_eq!(sites[0].0, SiteId(11));
        assert_eq!(
            sites[0].1.findings(),
            vec![(ExceptionKind::Nan, FpFormat::F32, 5), (ExceptionKind::Inf, FpFormat::F32, 2)]
        );
        assert!(decode_chunk(0, &[0; 7]).is_err());
    }
}
