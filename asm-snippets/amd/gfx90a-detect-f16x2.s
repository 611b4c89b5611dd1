// gfx90a fp16.co fp16_packed (Detect), table at 0x7f0000000000
    v_pk_fma_f16 v2, v4, v2, v4
    s_cselect_b64 s[12:13], -1, 0
    v_mov_b32_e32 v10, 0x297
    s_mov_b64 s[18:19], 0
    v_cmp_class_f16_e64 s[16:17], v2, v10
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_lshrrev_b32_e32 v11, 16, v2
    v_cmp_class_f16_e64 s[16:17], v11, v10
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 65  // 0x2340
    v_mov_b32_e32 v10, 3
    s_mov_b64 s[18:19], 0
    v_cmp_class_f16_e64 s[16:17], v2, v10
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_lshrrev_b32_e32 v11, 16, v2
    v_cmp_class_f16_e64 s[16:17], v11, v10
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2290
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 0
    v_mov_b32_e32 v9, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v8, v9, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v10, 0x204
    s_mov_b64 s[18:19], 0
    v_cmp_class_f16_e64 s[16:17], v2, v10
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_lshrrev_b32_e32 v11, 16, v2
    v_cmp_class_f16_e64 s[16:17], v11, v10
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x22e8
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 4
    v_mov_b32_e32 v9, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v8, v9, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v10, 0x90
    s_mov_b64 s[18:19], 0
    v_cmp_class_f16_e64 s[16:17], v2, v10
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_lshrrev_b32_e32 v11, 16, v2
    v_cmp_class_f16_e64 s[16:17], v11, v10
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2340
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v8, 8
    v_mov_b32_e32 v9, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v8, v9, s[20:21]
    s_mov_b64 exec, s[14:15]
    s_cmp_lg_u64 s[12:13], 0
    s_branch 65096  // 0x1c68
