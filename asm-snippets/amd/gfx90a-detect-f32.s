// gfx90a fp32.co fp32_axpy (Detect), table at 0x7f0000000000
    v_fmac_f32_e32 v5, s0, v4
    s_cselect_b64 s[8:9], -1, 0
    v_mov_b32_e32 v10, 0x297
    v_cmp_class_f32_e64 s[12:13], v5, v10
    s_cmp_lg_u64 s[12:13], 0
    s_cbranch_scc0 47  // 0x22dc
    v_mov_b32_e32 v10, 3
    v_cmp_class_f32_e64 s[12:13], v5, v10
    s_cmp_lg_u64 s[12:13], 0
    s_cbranch_scc0 10  // 0x225c
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 0
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v10, 0x204
    v_cmp_class_f32_e64 s[12:13], v5, v10
    s_cmp_lg_u64 s[12:13], 0
    s_cbranch_scc0 10  // 0x229c
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 4
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v10, 0x90
    v_cmp_class_f32_e64 s[12:13], v5, v10
    s_cmp_lg_u64 s[12:13], 0
    s_cbranch_scc0 10  // 0x22dc
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 8
    v_mov_b32_e32 v9, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v8, v9, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_cmp_lg_u64 s[8:9], 0
    s_branch 65057  // 0x1b68
