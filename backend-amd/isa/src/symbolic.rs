//! Symbolic 16-bit immediates of scalar instructions: hardware-register
//! selectors (`hwreg`), messages (`sendmsg`), wait counts (`s_waitcnt`) and
//! GPR-index modes. Names are kept in the tables below.

use crate::target::Target;

/// Hardware registers by id: `(id, name, gfx940 and later only)`.
const HWREGS: &[(u16, &str, bool)] = &[
    (1, "HW_REG_MODE", false),
    (2, "HW_REG_STATUS", false),
    (3, "HW_REG_TRAPSTS", false),
    (4, "HW_REG_HW_ID", false),
    (5, "HW_REG_GPR_ALLOC", false),
    (6, "HW_REG_LDS_ALLOC", false),
    (7, "HW_REG_IB_STS", false),
    (15, "HW_REG_SH_MEM_BASES", false),
    (16, "HW_REG_TBA_LO", false),
    (17, "HW_REG_TBA_HI", false),
    (18, "HW_REG_TMA_LO", false),
    (19, "HW_REG_TMA_HI", false),
    (20, "HW_REG_XCC_ID", true),
    (21, "HW_REG_SQ_PERF_SNAPSHOT_DATA", true),
    (22, "HW_REG_SQ_PERF_SNAPSHOT_DATA1", true),
    (23, "HW_REG_SQ_PERF_SNAPSHOT_PC_LO", true),
    (24, "HW_REG_SQ_PERF_SNAPSHOT_PC_HI", true),
];

/// Messages of `s_sendmsg`: `(id, name, takes a GS op)`.
const MESSAGES: &[(u16, &str, bool)] = &[
    (1, "MSG_INTERRUPT", false),
    (2, "MSG_GS", true),
    (3, "MSG_GS_DONE", true),
    (4, "MSG_SAVEWAVE", false),
    (5, "MSG_STALL_WAVE_GEN", false),
    (6, "MSG_HALT_WAVES", false),
    (7, "MSG_ORDERED_PS_DONE", false),
    (8, "MSG_EARLY_PRIM_DEALLOC", false),
    (9, "MSG_GS_ALLOC_REQ", false),
    (10, "MSG_GET_DOORBELL", false),
];

const GS_OPS: [&str; 4] = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];

/// `MSG_SYSMSG` (id 15) operations 1..=4.
const SYSMSG_OPS: [&str; 4] =
    ["SYSMSG_OP_ECC_ERR_INTERRUPT", "SYSMSG_OP_REG_RD", "SYSMSG_OP_HOST_TRAP_ACK", "SYSMSG_OP_TTRACE_PC"];

/// `hwreg(...)` for a SOPK immediate: id [5:0], offset [10:6], size-1 [15:11].
pub fn hwreg(v: u16, target: Target) -> String {
    let id = v & 0x3F;
    let offset = (v >> 6) & 0x1F;
    let size = ((v >> 11) & 0x1F) + 1;
    let name = HWREGS
        .iter()
        .find(|h| h.0 == id && (!h.2 || target.is_gfx940_plus()))
        .map(|h| h.1.to_string())
        .unwrap_or_else(|| id.to_string());
    if offset == 0 && size == 32 {
        format!("hwreg({name})")
    } else {
        format!("hwreg({name}, {offset}, {size})")
    }
}

/// `sendmsg(...)` for a SOPP immediate: message [3:0], GS op [6:4], stream [9:8].
pub fn sendmsg(v: u16) -> String {
    let id = v & 0xF;
    let op = (v >> 4) & 0x7;
    let stream = (v >> 8) & 0x3;
    if let Some(&(_, name, takes_op)) = MESSAGES.iter().find(|m| m.0 == id) {
        if takes_op && (op as usize) < GS_OPS.len() {
            let opname = GS_OPS[op as usize];
            if op == 0 {
                if id == 3 {
                    return format!("sendmsg({name}, {opname})");
                }
            } else {
                return format!("sendmsg({name}, {opname}, {stream})");
            }
        } else if !takes_op && op == 0 && stream == 0 {
            return format!("sendmsg({name})");
        }
    }
    if id == 15 && (1..=4).contains(&op) && stream == 0 {
        return format!("sendmsg(MSG_SYSMSG, {})", SYSMSG_OPS[op as usize - 1]);
    }
    if v <= 0x3FF {
        return format!("sendmsg({id}, {op}, {stream})");
    }
    v.to_string()
}

/// `vmcnt(..) expcnt(..) lgkmcnt(..)` for `s_waitcnt` on gfx9: vmcnt [3:0] and
/// [15:14], expcnt [6:4], lgkmcnt [11:8]; counters at their maximum are left out
/// unless all are.
pub fn waitcnt(v: u16) -> String {
    let vm = (v & 0xF) | ((v >> 14) & 3) << 4;
    let exp = (v >> 4) & 7;
    let lgkm = (v >> 8) & 0xF;
    let all = vm == 63 && exp == 7 && lgkm == 15;
    let mut parts = Vec::new();
    if vm != 63 || all {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 || all {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 15 || all {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    parts.join(" ")
}

/// Decoded wait counts of an `s_waitcnt` immediate: `(vmcnt, expcnt, lgkmcnt)`.
pub fn waitcnt_fields(v: u16) -> (u8, u8, u8) {
    (((v & 0xF) | ((v >> 14) & 3) << 4) as u8, ((v >> 4) & 7) as u8, ((v >> 8) & 0xF) as u8)
}

/// Buffer data formats of MTBUF (`dfmt`, 4 bits).
const DATA_FORMATS: [&str; 16] = [
    "INVALID",
    "8",
    "16",
    "8_8",
    "32",
    "16_16",
    "10_11_11",
    "11_11_10",
    "10_10_10_2",
    "2_10_10_10",
    "8_8_8_8",
    "32_32",
    "16_16_16_16",
    "32_32_32",
    "32_32_32_32",
    "RESERVED_15",
];
/// Buffer numeric formats of MTBUF (`nfmt`, 3 bits).
const NUM_FORMATS: [&str; 8] = ["UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT"];

/// `format:[BUF_DATA_FORMAT_..,BUF_NUM_FORMAT_..]` of MTBUF; None for the
/// default (8, UNORM), which is not printed.
pub fn buffer_format(dfmt: u32, nfmt: u32) -> Option<String> {
    let mut parts = Vec::new();
    if dfmt != 1 {
        parts.push(format!("BUF_DATA_FORMAT_{}", DATA_FORMATS[(dfmt & 15) as usize]));
    }
    if nfmt != 0 {
        parts.push(format!("BUF_NUM_FORMAT_{}", NUM_FORMATS[(nfmt & 7) as usize]));
    }
    if parts.is_empty() {
        None
    } else {
        Some(format!("format:[{}]", parts.join(",")))
    }
}

/// The offset of `ds_swizzle_b32` (without the `offset:` prefix): quad
/// permute (bit 15), FFT (>= 0xE000, gfx950 only; a number elsewhere) or a
/// bit-mask permute of the lane id (and [4:0], or [9:5], xor [14:10]).
pub fn swizzle(v: u16, target: Target) -> String {
    if v >= 0xE000 {
        return if target == Target::Gfx950 { format!("swizzle(FFT,{})", v & 0x1F) } else { v.to_string() };
    }
    if v & 0x8000 != 0 {
        let q = |i: u16| (v >> (2 * i)) & 3;
        return format!("swizzle(QUAD_PERM,{},{},{},{})", q(0), q(1), q(2), q(3));
    }
    let and = v & 0x1F;
    let or = (v >> 5) & 0x1F;
    let xor = (v >> 10) & 0x1F;
    if and == 0x1F && or == 0 && xor.is_power_of_two() {
        return format!("swizzle(SWAP,{xor})");
    }
    if and == 0x1F && or == 0 && xor != 0 && (xor + 1).is_power_of_two() {
        return format!("swizzle(REVERSE,{})", xor + 1);
    }
    if xor == 0 {
        for shift in 1..=5u16 {
            let size = 1u16 << shift;
            if and == 0x1F & !(size - 1) && or < size {
                return format!("swizzle(BROADCAST,{size},{or})");
            }
        }
    }
    let mut mask = String::new();
    for bit in (0..5).rev() {
        let (a, o, x) = ((and >> bit) & 1, (or >> bit) & 1, (xor >> bit) & 1);
        mask.push(match (a, o, x) {
            (0, o, x) => {
                if o ^ x == 1 {
                    '1'
                } else {
                    '0'
                }
            }
            (_, 1, x) => {
                if x == 1 {
                    '0'
                } else {
                    '1'
                }
            }
            (_, _, 0) => 'p',
            _ => 'i',
        });
    }
    format!("swizzle(BITMASK_PERM,\"{mask}\")")
}

/// `gpr_idx(SRC0,...)` mode mask of `s_set_gpr_idx_on` / `s_set_gpr_idx_mode`.
pub fn gpr_idx(v: u16) -> String {
    if v > 15 {
        return format!("0x{v:x}");
    }
    let names = ["SRC0", "SRC1", "SRC2", "DST"];
    let set: Vec<&str> = (0..4).filter(|i| v & (1 << i) != 0).map(|i| names[i]).collect();
    format!("gpr_idx({})", set.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waitcnt_matches_reference_renderings() {
        assert_eq!(waitcnt(0x0003), "vmcnt(3) expcnt(0) lgkmcnt(0)");
        assert_eq!(waitcnt(0xC07F), "lgkmcnt(0)");
        assert_eq!(waitcnt(0x8F71), "vmcnt(33)");
        assert_eq!(waitcnt(0x4F71), "vmcnt(17)");
    }

    #[test]
    fn swizzle_patterns() {
        let t = Target::Gfx90a;
        assert_eq!(swizzle(0x4, t), "swizzle(BITMASK_PERM,\"00p00\")");
        assert_eq!(swizzle(0x401F, t), "swizzle(SWAP,16)");
        assert_eq!(swizzle(0x1C1F, t), "swizzle(REVERSE,8)");
        assert_eq!(swizzle(0x5C, t), "swizzle(BROADCAST,4,2)");
        assert_eq!(swizzle(0x80E4, t), "swizzle(QUAD_PERM,0,1,2,3)");
        assert_eq!(swizzle(0x0015 | 0x0A << 5 | 0x03 << 10, t), "swizzle(BITMASK_PERM,\"p1p0i\")");
        assert_eq!(swizzle(0x1F, t), "swizzle(BITMASK_PERM,\"ppppp\")");
        assert_eq!(swizzle(0x3FF, t), "swizzle(BITMASK_PERM,\"11111\")");
        assert_eq!(swizzle(0x7FFF, t), "swizzle(BITMASK_PERM,\"00000\")");
        assert_eq!(swizzle(0xE005, t), "57349");
        assert_eq!(swizzle(0xE005, Target::Gfx950), "swizzle(FFT,5)");
    }

    #[test]
    fn hwreg_and_sendmsg() {
        assert_eq!(hwreg(0x1234, Target::Gfx90a), "hwreg(52, 8, 3)");
        assert_eq!(hwreg(0x8001, Target::Gfx90a), "hwreg(HW_REG_MODE, 0, 17)");
        assert_eq!(hwreg(0xF814, Target::Gfx942), "hwreg(HW_REG_XCC_ID)");
        assert_eq!(hwreg(0xF814, Target::Gfx90a), "hwreg(20)");
        assert_eq!(sendmsg(0x0003), "sendmsg(MSG_GS_DONE, GS_OP_NOP)");
        assert_eq!(sendmsg(0xC07F), "49279");
    }
}
