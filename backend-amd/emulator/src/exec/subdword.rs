//! Loads and stores of one or two bytes, shared by FLAT/GLOBAL, SCRATCH,
//! MUBUF and DS: how a loaded byte or short fills its register (zero- or
//! sign-extended to the dword, or, for the `_d16` forms, to the low or high
//! half with the other half kept) and which bytes a store takes (`_d16_hi`:
//! from the high half).

use super::*;

/// The half of a register a `_d16` access reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Half {
    /// Not a d16 form: the whole dword.
    Whole,
    Lo,
    Hi,
}

/// A sub-dword access: `bytes` (1 or 2) in memory, sign extension of a
/// load, and the register half.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SubDword {
    pub(crate) load: bool,
    pub(crate) bytes: usize,
    pub(crate) signed: bool,
    pub(crate) half: Half,
}

impl SubDword {
    /// The sub-dword loads and stores of every memory family.
    pub(crate) fn of(op: Opcode) -> Option<SubDword> {
        use Opcode as O;
        let (load, bytes, signed, half) = match op {
            O::FLAT_LOAD_UBYTE
            | O::GLOBAL_LOAD_UBYTE
            | O::SCRATCH_LOAD_UBYTE
            | O::BUFFER_LOAD_UBYTE
            | O::DS_READ_U8 => (true, 1, false, Half::Whole),
            O::FLAT_LOAD_SBYTE
            | O::GLOBAL_LOAD_SBYTE
            | O::SCRATCH_LOAD_SBYTE
            | O::BUFFER_LOAD_SBYTE
            | O::DS_READ_I8 => (true, 1, true, Half::Whole),
            O::FLAT_LOAD_USHORT
            | O::GLOBAL_LOAD_USHORT
            | O::SCRATCH_LOAD_USHORT
            | O::BUFFER_LOAD_USHORT
            | O::DS_READ_U16 => (true, 2, false, Half::Whole),
            O::FLAT_LOAD_SSHORT
            | O::GLOBAL_LOAD_SSHORT
            | O::SCRATCH_LOAD_SSHORT
            | O::BUFFER_LOAD_SSHORT
            | O::DS_READ_I16 => (true, 2, true, Half::Whole),
            O::FLAT_LOAD_UBYTE_D16
            | O::GLOBAL_LOAD_UBYTE_D16
            | O::SCRATCH_LOAD_UBYTE_D16
            | O::BUFFER_LOAD_UBYTE_D16
            | O::DS_READ_U8_D16 => (true, 1, false, Half::Lo),
            O::FLAT_LOAD_UBYTE_D16_HI
            | O::GLOBAL_LOAD_UBYTE_D16_HI
            | O::SCRATCH_LOAD_UBYTE_D16_HI
            | O::BUFFER_LOAD_UBYTE_D16_HI
            | O::DS_READ_U8_D16_HI => (true, 1, false, Half::Hi),
            O::FLAT_LOAD_SBYTE_D16
            | O::GLOBAL_LOAD_SBYTE_D16
            | O::SCRATCH_LOAD_SBYTE_D16
            | O::BUFFER_LOAD_SBYTE_D16
            | O::DS_READ_I8_D16 => (true, 1, true, Half::Lo),
            O::FLAT_LOAD_SBYTE_D16_HI
            | O::GLOBAL_LOAD_SBYTE_D16_HI
            | O::SCRATCH_LOAD_SBYTE_D16_HI
            | O::BUFFER_LOAD_SBYTE_D16_HI
            | O::DS_READ_I8_D16_HI => (true, 1, true, Half::Hi),
            O::FLAT_LOAD_SHORT_D16
            | O::GLOBAL_LOAD_SHORT_D16
            | O::SCRATCH_LOAD_SHORT_D16
            | O::BUFFER_LOAD_SHORT_D16
            | O::DS_READ_U16_D16 => (true, 2, false, Half::Lo),
            O::FLAT_LOAD_SHORT_D16_HI
            | O::GLOBAL_LOAD_SHORT_D16_HI
            | O::SCRATCH_LOAD_SHORT_D16_HI
            | O::BUFFER_LOAD_SHORT_D16_HI
            | O::DS_READ_U16_D16_HI => (true, 2, false, Half::Hi),
            O::FLAT_STORE_BYTE
            | O::GLOBAL_STORE_BYTE
            | O::SCRATCH_STORE_BYTE
            | O::BUFFER_STORE_BYTE
            | O::DS_WRITE_B8 => (false, 1, false, Half::Lo),
            O::FLAT_STORE_SHORT
            | O::GLOBAL_STORE_SHORT
            | O::SCRATCH_STORE_SHORT
            | O::BUFFER_STORE_SHORT
            | O::DS_WRITE_B16 => (false, 2, false, Half::Lo),
            O::FLAT_STORE_BYTE_D16_HI
            | O::GLOBAL_STORE_BYTE_D16_HI
            | O::SCRATCH_STORE_BYTE_D16_HI
            | O::BUFFER_STORE_BYTE_D16_HI
            | O::DS_WRITE_B8_D16_HI => (false, 1, false, Half::Hi),
            O::FLAT_STORE_SHORT_D16_HI
            | O::GLOBAL_STORE_SHORT_D16_HI
            | O::SCRATCH_STORE_SHORT_D16_HI
            | O::BUFFER_STORE_SHORT_D16_HI
            | O::DS_WRITE_B16_D16_HI => (false, 2, false, Half::Hi),
            _ => return None,
        };
        Some(SubDword { load, bytes, signed, half })
    }

    /// The register value after loading `mem` (little-endian, `bytes` of
    /// it) into a register that held `old`.
    pub(crate) fn loaded(self, mem: &[u8], old: u32) -> u32 {
        let raw = if self.bytes == 1 { mem[0] as u32 } else { u16::from_le_bytes([mem[0], mem[1]]) as u32 };
        let bits = 8 * self.bytes as u32;
        let value = if self.signed { ((raw << (32 - bits)) as i32 >> (32 - bits)) as u32 } else { raw };
        match self.half {
            Half::Whole => value,
            Half::Lo => (old & 0xFFFF_0000) | (value & 0xFFFF),
            Half::Hi => (old & 0xFFFF) | (value << 16),
        }
    }

    /// The bytes a store writes from register value `data` (the first
    /// `bytes` of the result).
    pub(crate) fn stored(self, data: u32) -> [u8; 2] {
        let v = if self.half == Half::Hi { data >> 16 } else { data };
        [v as u8, (v >> 8) as u8]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;

    /// One wave with every lane active, its memories, and a step on `target`.
    struct Machine {
        wave: Wave,
        global: GlobalMemory,
        lds: Lds,
        target: Target,
    }

    impl Machine {
        fn new(target: Target) -> Machine {
            let mut wave = Wave::new(0, 0xF0 | 1 << 9);
            wave.sgpr[EXEC as usize] = u32::MAX;
            wave.sgpr[EXEC as usize + 1] = u32::MAX;
            wave.private_size = 16;
            wave.private = vec![0; 64 * 16];
            Machine { wave, global: GlobalMemory::new(), lds: Lds::new(64), target }
        }
        fn step(&mut self, bytes: &[u8]) {
            let inst = decode(self.target, bytes).expect("decodes");
            let mut obs = Observations::default();
            let mut env = Env { global: &mut self.global, lds: &mut self.lds, obs: &mut obs, target: self.target };
            self.wave.step(&inst, &mut env).expect("runs");
        }
        fn v(&mut self, r: usize, value: u32) {
            self.wave.vgpr[r] = [value; 64];
        }
    }

    /// Encodings from llvm-mc-19 (gfx942; MUBUF on gfx90a).
    #[test]
    fn d16_loads_and_stores_execute() {
        let mut m = Machine::new(Target::Gfx942);
        let base = m.global.allocate(vec![0x85, 0x90, 0x34, 0x12, 0, 0, 0, 0]);
        m.v(2, base as u32);
        m.v(3, (base >> 32) as u32);
        m.v(1, 0x1111_2222);
        m.v(4, 0xBEEF_CAFE);
        // global_load_ubyte_d16_hi v1, v[2:3], off
        m.step(&[0x00, 0x80, 0x84, 0xdc, 0x02, 0x00, 0x7f, 0x01]);
        assert_eq!(m.wave.vgpr[1][9], 0x0085_2222);
        // global_load_sbyte_d16 v1, v[2:3], off offset:1
        m.step(&[0x01, 0x80, 0x88, 0xdc, 0x02, 0x00, 0x7f, 0x01]);
        assert_eq!(m.wave.vgpr[1][9], 0x0085_FF90);
        // global_load_short_d16_hi v1, v[2:3], off offset:2
        m.step(&[0x02, 0x80, 0x94, 0xdc, 0x02, 0x00, 0x7f, 0x01]);
        assert_eq!(m.wave.vgpr[1][63], 0x1234_FF90);
        // flat_load_sbyte_d16_hi v1, v[2:3]
        m.step(&[0x00, 0x00, 0x8c, 0xdc, 0x02, 0x00, 0x00, 0x01]);
        assert_eq!(m.wave.vgpr[1][0], 0xFF85_FF90);
        // global_store_short_d16_hi v[2:3], v4, off offset:4, then
        // global_store_byte_d16_hi v[2:3], v4, off offset:6
        m.step(&[0x04, 0x80, 0x6c, 0xdc, 0x02, 0x04, 0x7f, 0x00]);
        m.step(&[0x06, 0x80, 0x64, 0xdc, 0x02, 0x04, 0x7f, 0x00]);
        assert_eq!(m.global.allocation(base).expect("buffer"), &[0x85, 0x90, 0x34, 0x12, 0xEF, 0xBE, 0xEF, 0]);

        // LDS at address 0 for every lane.
        m.lds.write(0, &[0, 0x90, 0x34, 0x12]);
        m.v(0, 0);
        m.v(1, 0);
        // ds_read_u16_d16_hi v1, v0 offset:2, then ds_read_i8_d16 v1, v0 offset:1
        m.step(&[0x02, 0x00, 0xb6, 0xd8, 0x00, 0x00, 0x00, 0x01]);
        assert_eq!(m.wave.vgpr[1][5], 0x1234_0000);
        m.step(&[0x01, 0x00, 0xb0, 0xd8, 0x00, 0x00, 0x00, 0x01]);
        assert_eq!(m.wave.vgpr[1][5], 0x1234_FF90);
        // ds_write_b16_d16_hi v0, v4 offset:8; ds_write_b8_d16_hi v0, v4 offset:11
        m.step(&[0x08, 0x00, 0xaa, 0xd8, 0x00, 0x04, 0x00, 0x00]);
        m.step(&[0x0b, 0x00, 0xa8, 0xd8, 0x00, 0x04, 0x00, 0x00]);
        let mut b = [0u8; 4];
        assert!(m.lds.read(8, &mut b));
        assert_eq!(b, [0xEF, 0xBE, 0, 0xEF]);

        // Private memory: s0 = 0, each lane its own 16 bytes.
        for lane in 0..64 {
            m.wave.private[16 * lane + 5] = lane as u8;
        }
        m.v(1, 0xAAAA_BBBB);
        // scratch_load_ubyte_d16_hi v1, off, s0 offset:5
        m.step(&[0x05, 0x40, 0x84, 0xdc, 0x00, 0x00, 0x00, 0x01]);
        assert_eq!(m.wave.vgpr[1][7], 0x0007_BBBB);
        // scratch_store_short_d16_hi off, v4, s0 offset:8
        m.step(&[0x08, 0x40, 0x6c, 0xdc, 0x00, 0x04, 0x00, 0x00]);
        assert_eq!(&m.wave.private[16 * 3 + 8..16 * 3 + 10], &[0xEF, 0xBE]);

        // MUBUF through the private segment buffer (gfx90a), soffset 0.
        let mut m = Machine::new(Target::Gfx90a);
        m.wave.sgpr[3] = crate::wave::PRIVATE_BUFFER_MARK;
        m.wave.private[16 * 2 + 5] = 0xF7;
        m.v(1, 0xAAAA_BBBB);
        m.v(4, 0xBEEF_CAFE);
        // buffer_load_sbyte_d16_hi v1, off, s[0:3], 0 offset:5
        m.step(&[0x05, 0x00, 0x8c, 0xe0, 0x00, 0x01, 0x00, 0x80]);
        assert_eq!((m.wave.vgpr[1][2], m.wave.vgpr[1][3]), (0xFFF7_BBBB, 0x0000_BBBB));
        // buffer_store_byte_d16_hi v4, off, s[0:3], 0 offset:9
        m.step(&[0x09, 0x00, 0x64, 0xe0, 0x00, 0x04, 0x00, 0x80]);
        assert_eq!(m.wave.private[16 * 2 + 9], 0xEF);
    }

    #[test]
    fn loads_fill_their_half_and_stores_take_theirs() {
        let old = 0xAAAA_BBBB;
        let load = |op| SubDword::of(op).expect("sub-dword");
        assert_eq!(load(Opcode::GLOBAL_LOAD_UBYTE).loaded(&[0x85], old), 0x85);
        assert_eq!(load(Opcode::GLOBAL_LOAD_SBYTE).loaded(&[0x85], old), 0xFFFF_FF85);
        assert_eq!(load(Opcode::GLOBAL_LOAD_SSHORT).loaded(&[0x01, 0x80], old), 0xFFFF_8001);
        assert_eq!(load(Opcode::GLOBAL_LOAD_UBYTE_D16).loaded(&[0x85], old), 0xAAAA_0085);
        assert_eq!(load(Opcode::FLAT_LOAD_SBYTE_D16).loaded(&[0x85], old), 0xAAAA_FF85);
        assert_eq!(load(Opcode::SCRATCH_LOAD_UBYTE_D16_HI).loaded(&[0x85], old), 0x0085_BBBB);
        assert_eq!(load(Opcode::BUFFER_LOAD_SBYTE_D16_HI).loaded(&[0x85], old), 0xFF85_BBBB);
        assert_eq!(load(Opcode::DS_READ_U16_D16).loaded(&[0x34, 0x12], old), 0xAAAA_1234);
        assert_eq!(load(Opcode::DS_READ_U16_D16_HI).loaded(&[0x34, 0x12], old), 0x1234_BBBB);
        assert_eq!(load(Opcode::GLOBAL_STORE_SHORT).stored(0x1234_5678), [0x78, 0x56]);
        assert_eq!(load(Opcode::GLOBAL_STORE_SHORT_D16_HI).stored(0x1234_5678), [0x34, 0x12]);
        assert_eq!(load(Opcode::DS_WRITE_B8_D16_HI).stored(0x1234_5678), [0x34, 0x12]);
        assert!(!load(Opcode::SCRATCH_STORE_BYTE_D16_HI).load);
        assert_eq!(SubDword::of(Opcode::GLOBAL_LOAD_DWORD), None);
    }
}
