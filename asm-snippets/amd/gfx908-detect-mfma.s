// gfx908 mfma.co mfma_f32_16x16x16_f16 (Detect), table at 0x7f0000000000
    v_mfma_f32_16x16x16f16 a[0:3], v[1:2], v[3:4], a[0:3]
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[8:9], -1, 0
    v_mov_b32_e32 v22, 0x297
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 104  // 0x2320
    v_mov_b32_e32 v22, 3
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2208
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 0
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v22, 0x204
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2294
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 4
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v22, 0x90
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2320
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 8
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_cmp_lg_u64 s[8:9], 0
    s_branch 65303  // 0x1f84
    v_mfma_f32_16x16x16f16 a[0:3], v[5:6], v[7:8], a[0:3]
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[8:9], -1, 0
    v_mov_b32_e32 v22, 0x297
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 104  // 0x2548
    v_mov_b32_e32 v22, 3
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2430
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 12
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v22, 0x204
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x24bc
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 16
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v22, 0x90
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2548
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 20
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_cmp_lg_u64 s[8:9], 0
    s_branch 65169  // 0x1f94
    v_mfma_f32_16x16x16f16 a[0:3], v[9:10], v[11:12], a[0:3]
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[8:9], -1, 0
    v_mov_b32_e32 v22, 0x297
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 104  // 0x2770
    v_mov_b32_e32 v22, 3
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2658
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 24
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v22, 0x204
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x26e4
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 28
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v22, 0x90
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2770
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 32
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_cmp_lg_u64 s[8:9], 0
    s_branch 65034  // 0x1fa0
    v_mfma_f32_16x16x16f16 a[0:3], v[13:14], v[15:16], a[0:3]
    s_nop 7
    s_nop 7
    s_nop 7
    s_nop 7
    s_cselect_b64 s[8:9], -1, 0
    v_mov_b32_e32 v22, 0x297
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 104  // 0x2998
    v_mov_b32_e32 v22, 3
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2880
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 36
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v22, 0x204
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x290c
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 40
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    v_mov_b32_e32 v22, 0x90
    s_mov_b64 s[14:15], 0
    v_accvgpr_read_b32 v23, a0
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a1
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a2
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    v_accvgpr_read_b32 v23, a3
    v_cmp_class_f32_e64 s[12:13], v23, v22
    s_or_b64 s[14:15], s[14:15], s[12:13]
    s_cmp_lg_u64 s[14:15], 0
    s_cbranch_scc0 10  // 0x2998
    s_mov_b64 s[10:11], exec
    s_mov_b64 exec, 1
    v_mov_b32_e32 v20, 44
    v_mov_b32_e32 v21, 1
    s_mov_b32 s16, 0
    s_mov_b32 s17, 0x7f00
    global_atomic_add v20, v21, s[16:17]
    s_mov_b64 exec, s[10:11]
    s_cmp_lg_u64 s[8:9], 0
    s_branch 64899  // 0x1fac
