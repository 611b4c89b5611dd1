//! Data-parallel primitives (DPP) of VOP1/VOP2/VOPC: source 0 read from
//! another lane as `dpp_ctrl` names it (quad permutes, row shifts and
//! rotations, wave shifts and rotations, row mirrors, row broadcasts; on
//! gfx90a and later `row_newbcast`, the only control of the 64-bit forms),
//! and the write masks: `row_mask` and `bank_mask` keep lanes from being
//! written, and a lane whose source lane is out of range or inactive reads
//! 0 under `bound_ctrl` and is otherwise not written.

use super::valu::Valu;
use super::*;

/// The controls of the DPP dword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dpp {
    pub(crate) ctrl: u16,
    pub(crate) bound_ctrl: bool,
    pub(crate) row_mask: u8,
    pub(crate) bank_mask: u8,
}

/// Fills `f` from a VOP1/VOP2/VOPC instruction's first dword `w0` and DPP
/// dword `d`: source 0 (a VGPR) in [7:0], dpp_ctrl [16:8], bound_ctrl 19,
/// neg/abs of sources 0 and 1 in [23:20], bank_mask [27:24], row_mask
/// [31:28].
pub(crate) fn fields(w0: u32, d: u32, f: &mut Valu) {
    f.src[0] = 256 + (d & 0xFF) as u16;
    f.src[1] = 256 + ((w0 >> 9) & 0xFF) as u16;
    f.src[2] = VCC;
    f.dst = ((w0 >> 17) & 0xFF) as u16;
    f.sdst = VCC;
    f.neg = ((d >> 20) & 1 | ((d >> 22) & 1) << 1) as u8;
    f.abs = ((d >> 21) & 1 | ((d >> 23) & 1) << 1) as u8;
    f.dpp = Some(Dpp {
        ctrl: ((d >> 8) & 0x1FF) as u16,
        bound_ctrl: d & (1 << 19) != 0,
        row_mask: ((d >> 28) & 0xF) as u8,
        bank_mask: ((d >> 24) & 0xF) as u8,
    });
}

impl Dpp {
    /// The lane that `lane` reads source 0 from (`Some(None)`: out of
    /// range); `None` for a control value the target does not define.
    pub(crate) fn source(&self, lane: usize, gfx90a_plus: bool) -> Option<Option<usize>> {
        let (row, r) = (lane / 16, lane % 16);
        let base = lane - r;
        let n = (self.ctrl & 0xF) as usize;
        Some(match self.ctrl {
            0x000..=0x0FF => Some((lane & !3) | (self.ctrl as usize >> (2 * (lane & 3)) & 3)),
            0x101..=0x10F => (r + n < 16).then_some(lane + n),
            0x111..=0x11F => (r >= n).then(|| lane - n),
            0x121..=0x12F => Some(base + (r + 16 - n) % 16),
            0x130 => (lane < 63).then_some(lane + 1),
            0x134 => Some((lane + 1) % 64),
            0x138 => (lane > 0).then(|| lane - 1),
            0x13C => Some((lane + 63) % 64),
            0x140 => Some(base + 15 - r),
            0x141 => Some(base + (r & 8) + 7 - (r & 7)),
            0x142 => (row >= 1).then(|| 16 * row - 1),
            0x143 => (row >= 2).then_some(31),
            0x150..=0x15F if gfx90a_plus => Some(base + n),
            _ => return None,
        })
    }

    /// Whether the row and bank masks let `lane` be written.
    pub(crate) fn writes(&self, lane: usize) -> bool {
        self.row_mask >> (lane / 16) & 1 != 0 && self.bank_mask >> ((lane % 16) / 4) & 1 != 0
    }
}

impl Wave {
    /// A DPP-form VALU instruction: source 0 (`dwords` registers) is
    /// gathered from the lanes `dpp_ctrl` names before the instruction runs
    /// with EXEC narrowed to the lanes it writes; EXEC is restored after.
    pub(crate) fn valu_dpp(&mut self, inst: &Instruction, env: &mut Env<'_>, f: &Valu, dpp: Dpp) -> R<()> {
        let m = inst.mnemonic;
        if self.gpr_idx_on {
            return self.unsupported(format!("{m} in the DPP form in VGPR indexing mode"));
        }
        if inst.exec != xfpx_common::counters::MaskEffect::None {
            return self.unsupported(format!("{m} in the DPP form (it writes EXEC)"));
        }
        let exec = self.exec();
        let gfx90a_plus = env.target.is_gfx90a_plus();
        let dwords = inst.src0_dwords.max(1) as usize;
        let mut values = vec![[0u32; 64]; dwords];
        let mut write = 0u64;
        for lane in lanes(exec) {
            let Some(source) = dpp.source(lane, gfx90a_plus) else {
                return self.unsupported(format!("{m} with dpp_ctrl {:#x}", dpp.ctrl));
            };
            let source = source.filter(|&s| exec >> s & 1 != 0);
            if !dpp.writes(lane) || (source.is_none() && !dpp.bound_ctrl) {
                continue;
            }
            write |= 1 << lane;
            if let Some(s) = source {
                for (r, v) in values.iter_mut().enumerate() {
                    v[lane] = self.rv(env.obs, f.src[0] - 256 + r as u16, s);
                }
            }
        }
        // A compare writes its mask for every lane: only an unmasked DPP
        // compare keeps that meaning.
        if inst.encoding == Encoding::Vopc && write != exec {
            return self.unsupported(format!("{m} in the DPP form with masked lanes"));
        }
        self.dpp_src0 = values;
        self.set_exec(write);
        let result = self.valu_lanes(inst, env, f);
        self.set_exec(exec);
        self.dpp_src0 = Vec::new();
        result
    }

    /// Dword `r` of source 0 of a DPP form in `lane`, as gathered.
    pub(crate) fn dpp_src0(&self, r: usize, lane: usize) -> u32 {
        self.dpp_src0.get(r).map_or(0, |v| v[lane])
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, wave};
    use super::*;

    fn f64_at(w: &Wave, r: usize, lane: usize) -> f64 {
        f64::from_bits(w.vgpr[r][lane] as u64 | (w.vgpr[r + 1][lane] as u64) << 32)
    }

    /// Encodings from llvm-mc-19 (gfx942).
    #[test]
    fn sixty_four_bit_sources_broadcast_one_lane_per_row() {
        let mut w = wave(0xF0);
        for l in 0..64 {
            let (a, b) = ((l as f64).to_bits(), 2.0f64.to_bits());
            (w.vgpr[2][l], w.vgpr[3][l]) = (a as u32, (a >> 32) as u32);
            (w.vgpr[4][l], w.vgpr[5][l]) = (b as u32, (b >> 32) as u32);
            (w.vgpr[0][l], w.vgpr[1][l]) = (0, 0);
        }
        // v_mov_b64_dpp v[0:1], v[2:3] row_newbcast:1
        run(&mut w, &[0x7E00_70FA, 0xFF01_5102]).expect("runs");
        assert_eq!((f64_at(&w, 0, 0), f64_at(&w, 0, 37)), (1.0, 33.0));
        // v_fmac_f64_dpp v[0:1], v[2:3], v[4:5] row_newbcast:2: v0 += v2[row + 2] * 2.
        run(&mut w, &[0x0800_08FA, 0xFF01_5202]).expect("runs");
        assert_eq!((f64_at(&w, 0, 5), f64_at(&w, 0, 63)), (1.0 + 4.0, 49.0 + 100.0));
    }

    #[test]
    fn invalid_and_inactive_sources_keep_or_zero_the_lane() {
        let mut w = wave(0xF0);
        for l in 0..64 {
            w.vgpr[1][l] = 100 + l as u32;
            w.vgpr[0][l] = 7;
        }
        // Lane 20 inactive: lane 21 reads from it.
        w.sgpr[EXEC as usize] = !(1 << 20);
        // v_mov_b32_dpp v0, v1 row_shr:1 (no bound_ctrl): lanes 0, 16, ...
        // and 21 keep their value; the others read lane - 1.
        run(&mut w, &[0x7E00_02FA, 0xFF01_1101]).expect("runs");
        assert_eq!((w.vgpr[0][0], w.vgpr[0][16], w.vgpr[0][21], w.vgpr[0][20]), (7, 7, 7, 7));
        assert_eq!((w.vgpr[0][1], w.vgpr[0][63]), (100, 162));
        // With bound_ctrl (bit 19) they read 0; EXEC is as before.
        run(&mut w, &[0x7E00_02FA, 0xFF09_1101]).expect("runs");
        assert_eq!((w.vgpr[0][16], w.vgpr[0][21], w.vgpr[0][20], w.vgpr[0][17]), (0, 0, 7, 116));
        assert_eq!(w.exec(), !(1u64 << 20) & 0xFFFF_FFFF | 0xFFFF_FFFF << 32);
    }

    fn dpp(ctrl: u16) -> Dpp {
        Dpp { ctrl, bound_ctrl: false, row_mask: 0xF, bank_mask: 0xF }
    }

    #[test]
    fn source_lanes() {
        // quad_perm:[1,0,3,2] swaps neighbours.
        assert_eq!(dpp(0b10_11_00_01).source(5, false), Some(Some(4)));
        assert_eq!(dpp(0b10_11_00_01).source(6, false), Some(Some(7)));
        // row_shl:1 reads lane + 1 within the row; lane 15 has none.
        assert_eq!(dpp(0x101).source(3, false), Some(Some(4)));
        assert_eq!(dpp(0x101).source(15, false), Some(None));
        // row_shr:3, row_ror:3.
        assert_eq!(dpp(0x113).source(18, false), Some(None));
        assert_eq!(dpp(0x113).source(20, false), Some(Some(17)));
        assert_eq!(dpp(0x123).source(17, false), Some(Some(30)));
        // wave shifts and rotations.
        assert_eq!(dpp(0x130).source(63, false), Some(None));
        assert_eq!(dpp(0x134).source(63, false), Some(Some(0)));
        assert_eq!(dpp(0x138).source(0, false), Some(None));
        assert_eq!(dpp(0x13C).source(0, false), Some(Some(63)));
        // Mirrors.
        assert_eq!(dpp(0x140).source(17, false), Some(Some(30)));
        assert_eq!(dpp(0x141).source(17, false), Some(Some(22)));
        assert_eq!(dpp(0x141).source(25, false), Some(Some(30)));
        // Broadcasts: lane 15 of the previous row, lane 31 to rows 2 and 3.
        assert_eq!(dpp(0x142).source(40, false), Some(Some(31)));
        assert_eq!(dpp(0x142).source(3, false), Some(None));
        assert_eq!(dpp(0x143).source(50, false), Some(Some(31)));
        assert_eq!(dpp(0x143).source(20, false), Some(None));
        // row_newbcast:5 on gfx90a and later only.
        assert_eq!(dpp(0x155).source(40, true), Some(Some(37)));
        assert_eq!(dpp(0x155).source(40, false), None);
        // Masks: row 1 and bank 2 off.
        let d = Dpp { ctrl: 0, bound_ctrl: false, row_mask: 0b1101, bank_mask: 0b1011 };
        assert!(!d.writes(20) && !d.writes(8) && d.writes(4) && d.writes(44));
    }
}
