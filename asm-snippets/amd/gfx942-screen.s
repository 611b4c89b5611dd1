// gfx942 fp32.co fp32_axpy (Screen), table at 0x7f0000000000
    s_waitcnt vmcnt(0) lgkmcnt(0)
    s_nop 4
    s_getreg_b32 s20, hwreg(HW_REG_TRAPSTS, 0, 9)
    s_cmp_eq_u32 s20, 0
    s_cbranch_scc1 110  // 0x23cc
    s_and_b32 s12, s20, 1
    s_cbranch_scc0 10  // 0x2244
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 0
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_and_b32 s12, s20, 2
    s_cbranch_scc0 10  // 0x2274
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 4
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_and_b32 s12, s20, 4
    s_cbranch_scc0 10  // 0x22a4
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 8
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_and_b32 s12, s20, 8
    s_cbranch_scc0 10  // 0x22d4
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 12
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_and_b32 s12, s20, 16
    s_cbranch_scc0 10  // 0x2304
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 16
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_and_b32 s12, s20, 32
    s_cbranch_scc0 10  // 0x2334
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 20
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_and_b32 s12, s20, 64
    s_cbranch_scc0 10  // 0x2364
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 24
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_and_b32 s12, s20, 0x80
    s_cbranch_scc0 10  // 0x2398
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 28
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_and_b32 s12, s20, 0x100
    s_cbranch_scc0 10  // 0x23cc
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 32
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_endpgm
