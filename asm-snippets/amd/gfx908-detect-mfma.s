// gfx908 mfma.co mfma_f32_16x16x16_f16 (Detect), table at 0x7f0000000000
    v_mfma_f32_16x16x16f16 a[0:3], v[1:2], v[3:4], a[0:3]
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[12:13], -1, 0
    v_mov_b32_e32 v23, 0x297
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 104  // 0x2320
    v_mov_b32_e32 v23, 3
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2208
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 0
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v23, 0x204
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2294
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 4
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v23, 0x90
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2320
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 8
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    s_cmp_lg_u64 s[12:13], 0
    s_branch 65303  // 0x1f84
    v_mfma_f32_16x16x16f16 a[0:3], v[5:6], v[7:8], a[0:3]
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[12:13], -1, 0
    v_mov_b32_e32 v23, 0x297
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 104  // 0x2548
    v_mov_b32_e32 v23, 3
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2430
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 12
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v23, 0x204
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x24bc
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 16
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v23, 0x90
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2548
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 20
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    s_cmp_lg_u64 s[12:13], 0
    s_branch 65169  // 0x1f94
    v_mfma_f32_16x16x16f16 a[0:3], v[9:10], v[11:12], a[0:3]
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[12:13], -1, 0
    v_mov_b32_e32 v23, 0x297
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 104  // 0x2770
    v_mov_b32_e32 v23, 3
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2658
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 24
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v23, 0x204
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x26e4
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 28
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v23, 0x90
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2770
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 32
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    s_cmp_lg_u64 s[12:13], 0
    s_branch 65034  // 0x1fa0
    v_mfma_f32_16x16x16f16 a[0:3], v[13:14], v[15:16], a[0:3]
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[12:13], -1, 0
    v_mov_b32_e32 v23, 0x297
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 104  // 0x2998
    v_mov_b32_e32 v23, 3
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2880
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 36
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v23, 0x204
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x290c
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 40
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    v_mov_b32_e32 v23, 0x90
    s_mov_b64 s[18:19], 0
    v_accvgpr_read_b32 v24, a0
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a1
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a2
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    v_accvgpr_read_b32 v24, a3
    v_cmp_class_f32_e64 s[16:17], v24, v23
    s_or_b64 s[18:19], s[18:19], s[16:17]
    s_cmp_lg_u64 s[18:19], 0
    s_cbranch_scc0 10  // 0x2998
    s_mov_b64 s[14:15], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v21, 44
    v_mov_b32_e32 v22, 1
    s_mov_b32 s20, 0
    s_mov_b32 s21, 0x7f00
    global_atomic_add v21, v22, s[20:21]
    s_mov_b64 exec, s[14:15]
    s_cmp_lg_u64 s[12:13], 0
    s_branch 64899  // 0x1fac
