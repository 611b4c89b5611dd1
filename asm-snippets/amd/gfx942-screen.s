// gfx942 fp32.co fp32_axpy (Screen), table at 0x7f0000000000
    s_getreg_b32 s9, hwreg(HW_REG_TRAPSTS, 0, 9)
    s_cmp_lg_u32 s9, 0
    s_cbranch_scc0 10  // 0x2234
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 0
    v_mov_b32_e32 v9, s9
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_or v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_endpgm
