// gfx90a mfma.co mfma_f32_32x32x1 (Detect), table at 0x7f0000000000
    v_mfma_f32_32x32x1f32 v[0:31], v1, v2, 0
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[12:13], -1, 0
    v_mov_b32_e32 v38, 0x297
    s_mov_b64 s[18:19], 0
    v_cmp_class_f32_e64 s[16:17], v0, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v1, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v2, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v3, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v4, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v5, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v6, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v7, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v8, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v9, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v10, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v11, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v12, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v13, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v14, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v15, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v16, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v17, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v18, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v19, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v20, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v21, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v22, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v23, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v24, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v25, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v26, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v27, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v28, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v29, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v30, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v31, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 332  // 0x31e0
    v_mov_b32_e32 v38, 3
    s_mov_b64 s[18:19], 0
    v_cmp_class_f32_e64 s[16:17], v0, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v1, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v2, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v3, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v4, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v5, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v6, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v7, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v8, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v9, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v10, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v11, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v12, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v13, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v14, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v15, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v16, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v17, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v18, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v19, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v20, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v21, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v22, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v23, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v24, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v25, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v26, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v27, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v28, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v29, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v30, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v31, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2e68
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v36, 0
    v_mov_b32_e32 v37, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v36, v37, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v38, 0x204
    s_mov_b64 s[18:19], 0
    v_cmp_class_f32_e64 s[16:17], v0, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v1, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v2, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v3, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v4, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v5, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v6, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v7, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v8, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v9, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v10, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v11, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v12, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v13, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v14, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v15, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v16, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v17, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v18, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v19, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v20, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v21, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v22, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v23, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v24, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v25, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v26, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v27, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v28, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v29, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v30, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v31, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x3024
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v36, 4
    v_mov_b32_e32 v37, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v36, v37, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v38, 0x90
    s_mov_b64 s[18:19], 0
    v_cmp_class_f32_e64 s[16:17], v0, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v1, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v2, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v3, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v4, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v5, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v6, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v7, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v8, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v9, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v10, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v11, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v12, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v13, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v14, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v15, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v16, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v17, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v18, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v19, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v20, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v21, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v22, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v23, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v24, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v25, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v26, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v27, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v28, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v29, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v30, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_cmp_class_f32_e64 s[16:17], v31, v38
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x31e0
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v36, 8
    v_mov_b32_e32 v37, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v36, v37, s[20:21]
    s_mov_b64 exec, s[14:15]
    s_cmp_lg_u64 s[12:13], 0
    s_branch 64536  // 0x2248
