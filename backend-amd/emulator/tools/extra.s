// Instructions the emulator implements beyond those the fixtures compile
// to: assembled per target by regen.sh (llvm-mc) so that the decoder knows
// their encodings; lines a target rejects are left out for that target.
s_add_u32 s0, s1, s2
s_sub_u32 s0, s1, s2
s_add_i32 s0, s1, s2
s_sub_i32 s0, s1, s2
s_addc_u32 s0, s1, s2
s_subb_u32 s0, s1, s2
s_min_i32 s0, s1, s2
s_min_u32 s0, s1, s2
s_max_i32 s0, s1, s2
s_max_u32 s0, s1, s2
s_cselect_b32 s0, s1, s2
s_and_b32 s0, s1, s2
s_or_b32 s0, s1, s2
s_xor_b32 s0, s1, s2
s_andn2_b32 s0, s1, s2
s_orn2_b32 s0, s1, s2
s_nand_b32 s0, s1, s2
s_nor_b32 s0, s1, s2
s_xnor_b32 s0, s1, s2
s_lshl_b32 s0, s1, s2
s_lshr_b32 s0, s1, s2
s_ashr_i32 s0, s1, s2
s_bfe_u32 s0, s1, s2
s_bfe_i32 s0, s1, s2
s_mul_i32 s0, s1, s2
s_mul_hi_u32 s0, s1, s2
s_mul_hi_i32 s0, s1, s2
s_lshl1_add_u32 s0, s1, s2
s_lshl2_add_u32 s0, s1, s2
s_lshl3_add_u32 s0, s1, s2
s_lshl4_add_u32 s0, s1, s2
s_pack_ll_b32_b16 s0, s1, s2
s_pack_lh_b32_b16 s0, s1, s2
s_pack_hh_b32_b16 s0, s1, s2
s_and_b64 s[0:1], s[2:3], s[4:5]
s_or_b64 s[0:1], s[2:3], s[4:5]
s_xor_b64 s[0:1], s[2:3], s[4:5]
s_andn2_b64 s[0:1], s[2:3], s[4:5]
s_orn2_b64 s[0:1], s[2:3], s[4:5]
s_nand_b64 s[0:1], s[2:3], s[4:5]
s_nor_b64 s[0:1], s[2:3], s[4:5]
s_xnor_b64 s[0:1], s[2:3], s[4:5]
s_cselect_b64 s[0:1], s[2:3], s[4:5]
s_lshl_b64 s[0:1], s[2:3], s4
s_lshr_b64 s[0:1], s[2:3], s4
s_ashr_i64 s[0:1], s[2:3], s4
s_mov_b32 s0, s1
s_cmov_b32 s0, s1
s_not_b32 s0, s1
s_brev_b32 s0, s1
s_bcnt1_i32_b32 s0, s1
s_ff1_i32_b32 s0, s1
s_flbit_i32_b32 s0, s1
s_sext_i32_i8 s0, s1
s_sext_i32_i16 s0, s1
s_abs_i32 s0, s1
s_mov_b64 s[0:1], s[2:3]
s_not_b64 s[0:1], s[2:3]
s_brev_b64 s[0:1], s[2:3]
s_and_saveexec_b64 s[0:1], s[2:3]
s_or_saveexec_b64 s[0:1], s[2:3]
s_xor_saveexec_b64 s[0:1], s[2:3]
s_andn2_saveexec_b64 s[0:1], s[2:3]
s_orn2_saveexec_b64 s[0:1], s[2:3]
s_nand_saveexec_b64 s[0:1], s[2:3]
s_nor_saveexec_b64 s[0:1], s[2:3]
s_xnor_saveexec_b64 s[0:1], s[2:3]
s_swappc_b64 s[0:1], s[2:3]
s_getpc_b64 s[0:1]
s_setpc_b64 s[0:1]
s_cmp_eq_i32 s0, s1
s_cmp_eq_u32 s0, s1
s_cmp_lg_i32 s0, s1
s_cmp_lg_u32 s0, s1
s_cmp_gt_i32 s0, s1
s_cmp_gt_u32 s0, s1
s_cmp_ge_i32 s0, s1
s_cmp_ge_u32 s0, s1
s_cmp_lt_i32 s0, s1
s_cmp_lt_u32 s0, s1
s_cmp_le_i32 s0, s1
s_cmp_le_u32 s0, s1
s_cmp_eq_u64 s[0:1], s[2:3]
s_cmp_lg_u64 s[0:1], s[2:3]
s_bitcmp0_b32 s0, s1
s_bitcmp1_b32 s0, s1
s_movk_i32 s0, 0x1234
s_cmovk_i32 s0, 0x1234
s_addk_i32 s0, 0x1234
s_mulk_i32 s0, 0x1234
s_getreg_b32 s0, hwreg(HW_REG_MODE)
s_setreg_b32 hwreg(HW_REG_MODE), s0
s_setreg_imm32_b32 hwreg(HW_REG_MODE), 0x1234
s_cmpk_eq_i32 s0, 0x1234
s_cmpk_eq_u32 s0, 0x1234
s_cmpk_lg_i32 s0, 0x1234
s_cmpk_lg_u32 s0, 0x1234
s_cmpk_gt_i32 s0, 0x1234
s_cmpk_gt_u32 s0, 0x1234
s_cmpk_ge_i32 s0, 0x1234
s_cmpk_ge_u32 s0, 0x1234
s_cmpk_lt_i32 s0, 0x1234
s_cmpk_lt_u32 s0, 0x1234
s_cmpk_le_i32 s0, 0x1234
s_cmpk_le_u32 s0, 0x1234
s_nop 0
s_endpgm
s_branch 1
s_cbranch_scc0 1
s_cbranch_scc1 1
s_cbranch_vccz 1
s_cbranch_vccnz 1
s_cbranch_execz 1
s_cbranch_execnz 1
s_barrier
s_waitcnt 0
s_sleep 1
s_setprio 1
s_load_dword s0, s[2:3], 0x10
s_load_dwordx2 s[0:1], s[2:3], 0x10
s_load_dwordx4 s[0:3], s[4:5], 0x10
s_load_dwordx8 s[0:7], s[8:9], 0x10
s_load_dwordx16 s[0:15], s[16:17], 0x10
v_mov_b32_e32 v0, v1
v_not_b32_e32 v0, v1
v_bfrev_b32_e32 v0, v1
v_ffbh_u32_e32 v0, v1
v_ffbl_b32_e32 v0, v1
v_ffbh_i32_e32 v0, v1
v_cvt_u32_f32_e32 v0, v1
v_cvt_i32_f32_e32 v0, v1
v_cvt_f32_i32_e32 v0, v1
v_cvt_f32_u32_e32 v0, v1
v_cvt_f32_f16_e32 v0, v1
v_cvt_f16_f32_e32 v0, v1
v_cvt_f32_ubyte0_e32 v0, v1
v_trunc_f32_e32 v0, v1
v_floor_f32_e32 v0, v1
v_ceil_f32_e32 v0, v1
v_rndne_f32_e32 v0, v1
v_fract_f32_e32 v0, v1
v_rcp_f32_e32 v0, v1
v_rcp_iflag_f32_e32 v0, v1
v_rsq_f32_e32 v0, v1
v_sqrt_f32_e32 v0, v1
v_exp_f32_e32 v0, v1
v_log_f32_e32 v0, v1
v_cvt_f64_i32_e32 v[0:1], v1
v_cvt_f64_u32_e32 v[0:1], v1
v_cvt_f64_f32_e32 v[0:1], v1
v_cvt_i32_f64_e32 v0, v[2:3]
v_cvt_u32_f64_e32 v0, v[2:3]
v_cvt_f32_f64_e32 v0, v[2:3]
v_trunc_f64_e32 v[0:1], v[2:3]
v_floor_f64_e32 v[0:1], v[2:3]
v_ceil_f64_e32 v[0:1], v[2:3]
v_rndne_f64_e32 v[0:1], v[2:3]
v_fract_f64_e32 v[0:1], v[2:3]
v_rcp_f64_e32 v[0:1], v[2:3]
v_rsq_f64_e32 v[0:1], v[2:3]
v_sqrt_f64_e32 v[0:1], v[2:3]
v_readfirstlane_b32 s0, v1
v_add_f32_e32 v0, v1, v2
v_sub_f32_e32 v0, v1, v2
v_subrev_f32_e32 v0, v1, v2
v_mul_f32_e32 v0, v1, v2
v_min_f32_e32 v0, v1, v2
v_max_f32_e32 v0, v1, v2
v_add_u32_e32 v0, v1, v2
v_sub_u32_e32 v0, v1, v2
v_subrev_u32_e32 v0, v1, v2
v_and_b32_e32 v0, v1, v2
v_or_b32_e32 v0, v1, v2
v_xor_b32_e32 v0, v1, v2
v_lshlrev_b32_e32 v0, v1, v2
v_lshrrev_b32_e32 v0, v1, v2
v_ashrrev_i32_e32 v0, v1, v2
v_mul_u32_u24_e32 v0, v1, v2
v_mul_i32_i24_e32 v0, v1, v2
v_min_i32_e32 v0, v1, v2
v_max_i32_e32 v0, v1, v2
v_min_u32_e32 v0, v1, v2
v_max_u32_e32 v0, v1, v2
v_fmac_f32_e32 v0, v1, v2
v_add_f16_e32 v0, v1, v2
v_sub_f16_e32 v0, v1, v2
v_subrev_f16_e32 v0, v1, v2
v_mul_f16_e32 v0, v1, v2
v_fmac_f16_e32 v0, v1, v2
v_lshlrev_b16_e32 v0, v1, v2
v_lshrrev_b16_e32 v0, v1, v2
v_ldexp_f32_e32 v0, v1, v2
v_cndmask_b32_e32 v0, v1, v2, vcc
v_add_co_u32_e32 v0, vcc, v1, v2
v_sub_co_u32_e32 v0, vcc, v1, v2
v_subrev_co_u32_e32 v0, vcc, v1, v2
v_addc_co_u32_e32 v0, vcc, v1, v2, vcc
v_subb_co_u32_e32 v0, vcc, v1, v2, vcc
v_subbrev_co_u32_e32 v0, vcc, v1, v2, vcc
v_fmamk_f32 v0, v1, 0x3f800000, v2
v_fmaak_f32 v0, v1, v2, 0x3f800000
v_madmk_f32 v0, v1, 0x3f800000, v2
v_madak_f32 v0, v1, v2, 0x3f800000
v_fmac_f64_e32 v[0:1], v[2:3], v[4:5]
v_cndmask_b32_e64 v0, v1, v2, s[4:5]
v_add_co_u32_e64 v0, s[4:5], v1, v2
v_addc_co_u32_e64 v0, s[4:5], v1, v2, s[6:7]
v_sub_co_u32_e64 v0, s[4:5], v1, v2
v_subb_co_u32_e64 v0, s[4:5], v1, v2, s[6:7]
v_readlane_b32 s0, v1, s2
v_writelane_b32 v0, s1, s2
v_mul_lo_u32 v0, v1, v2
v_mul_hi_u32 v0, v1, v2
v_mul_hi_i32 v0, v1, v2
v_bcnt_u32_b32 v0, v1, v2
v_bfm_b32 v0, v1, v2
v_fma_f32 v0, v1, v2, v3
v_mad_f32 v0, v1, v2, v3
v_fma_f16 v0, v1, v2, v3
v_max3_f32 v0, v1, v2, v3
v_min3_f32 v0, v1, v2, v3
v_lshl_add_u32 v0, v1, v2, v3
v_add_lshl_u32 v0, v1, v2, v3
v_lshl_or_b32 v0, v1, v2, v3
v_and_or_b32 v0, v1, v2, v3
v_or3_b32 v0, v1, v2, v3
v_xad_u32 v0, v1, v2, v3
v_add3_u32 v0, v1, v2, v3
v_mad_u32_u24 v0, v1, v2, v3
v_bfe_u32 v0, v1, v2, v3
v_bfe_i32 v0, v1, v2, v3
v_bfi_b32 v0, v1, v2, v3
v_alignbit_b32 v0, v1, v2, v3
v_perm_b32 v0, v1, v2, v3
v_min3_i32 v0, v1, v2, v3
v_max3_i32 v0, v1, v2, v3
v_min3_u32 v0, v1, v2, v3
v_max3_u32 v0, v1, v2, v3
v_div_scale_f32 v0, vcc, v1, v2, v3
v_div_fmas_f32 v0, v1, v2, v3
v_div_fixup_f32 v0, v1, v2, v3
v_div_scale_f64 v[0:1], vcc, v[2:3], v[4:5], v[6:7]
v_div_fmas_f64 v[0:1], v[2:3], v[4:5], v[6:7]
v_div_fixup_f64 v[0:1], v[2:3], v[4:5], v[6:7]
v_add_f64 v[0:1], v[2:3], v[4:5]
v_mul_f64 v[0:1], v[2:3], v[4:5]
v_fma_f64 v[0:1], v[2:3], v[4:5], v[6:7]
v_min_f64 v[0:1], v[2:3], v[4:5]
v_max_f64 v[0:1], v[2:3], v[4:5]
v_ldexp_f64 v[0:1], v[2:3], v4
v_mad_u64_u32 v[0:1], s[4:5], v2, v3, v[6:7]
v_mad_i64_i32 v[0:1], s[4:5], v2, v3, v[6:7]
v_lshlrev_b64 v[0:1], v2, v[4:5]
v_lshrrev_b64 v[0:1], v2, v[4:5]
v_ashrrev_i64 v[0:1], v2, v[4:5]
v_lshl_add_u64 v[0:1], v[2:3], 2, v[4:5]
v_pack_b32_f16 v0, v1, v2
v_pk_add_f16 v0, v1, v2
v_pk_mul_f16 v0, v1, v2
v_pk_fma_f16 v0, v1, v2, v3
v_pk_add_f32 v[0:1], v[2:3], v[4:5]
v_pk_mul_f32 v[0:1], v[2:3], v[4:5]
v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]
v_fma_mix_f32 v0, v1, v2, v3
v_fma_mixlo_f16 v0, v1, v2, v3
v_fma_mixhi_f16 v0, v1, v2, v3
v_cmp_f_f16_e32 vcc, v1, v2
v_cmp_f_f16_e64 s[0:1], v1, v2
v_cmpx_f_f16_e32 vcc, v1, v2
v_cmp_lt_f16_e32 vcc, v1, v2
v_cmp_lt_f16_e64 s[0:1], v1, v2
v_cmpx_lt_f16_e32 vcc, v1, v2
v_cmp_eq_f16_e32 vcc, v1, v2
v_cmp_eq_f16_e64 s[0:1], v1, v2
v_cmpx_eq_f16_e32 vcc, v1, v2
v_cmp_le_f16_e32 vcc, v1, v2
v_cmp_le_f16_e64 s[0:1], v1, v2
v_cmpx_le_f16_e32 vcc, v1, v2
v_cmp_gt_f16_e32 vcc, v1, v2
v_cmp_gt_f16_e64 s[0:1], v1, v2
v_cmpx_gt_f16_e32 vcc, v1, v2
v_cmp_lg_f16_e32 vcc, v1, v2
v_cmp_lg_f16_e64 s[0:1], v1, v2
v_cmpx_lg_f16_e32 vcc, v1, v2
v_cmp_ge_f16_e32 vcc, v1, v2
v_cmp_ge_f16_e64 s[0:1], v1, v2
v_cmpx_ge_f16_e32 vcc, v1, v2
v_cmp_o_f16_e32 vcc, v1, v2
v_cmp_o_f16_e64 s[0:1], v1, v2
v_cmpx_o_f16_e32 vcc, v1, v2
v_cmp_u_f16_e32 vcc, v1, v2
v_cmp_u_f16_e64 s[0:1], v1, v2
v_cmpx_u_f16_e32 vcc, v1, v2
v_cmp_nge_f16_e32 vcc, v1, v2
v_cmp_nge_f16_e64 s[0:1], v1, v2
v_cmpx_nge_f16_e32 vcc, v1, v2
v_cmp_nlg_f16_e32 vcc, v1, v2
v_cmp_nlg_f16_e64 s[0:1], v1, v2
v_cmpx_nlg_f16_e32 vcc, v1, v2
v_cmp_ngt_f16_e32 vcc, v1, v2
v_cmp_ngt_f16_e64 s[0:1], v1, v2
v_cmpx_ngt_f16_e32 vcc, v1, v2
v_cmp_nle_f16_e32 vcc, v1, v2
v_cmp_nle_f16_e64 s[0:1], v1, v2
v_cmpx_nle_f16_e32 vcc, v1, v2
v_cmp_neq_f16_e32 vcc, v1, v2
v_cmp_neq_f16_e64 s[0:1], v1, v2
v_cmpx_neq_f16_e32 vcc, v1, v2
v_cmp_nlt_f16_e32 vcc, v1, v2
v_cmp_nlt_f16_e64 s[0:1], v1, v2
v_cmpx_nlt_f16_e32 vcc, v1, v2
v_cmp_tru_f16_e32 vcc, v1, v2
v_cmp_tru_f16_e64 s[0:1], v1, v2
v_cmpx_tru_f16_e32 vcc, v1, v2
v_cmp_class_f16_e32 vcc, v1, v6
v_cmp_class_f16_e64 s[0:1], v1, v6
v_cmp_f_f32_e32 vcc, v1, v2
v_cmp_f_f32_e64 s[0:1], v1, v2
v_cmpx_f_f32_e32 vcc, v1, v2
v_cmp_lt_f32_e32 vcc, v1, v2
v_cmp_lt_f32_e64 s[0:1], v1, v2
v_cmpx_lt_f32_e32 vcc, v1, v2
v_cmp_eq_f32_e32 vcc, v1, v2
v_cmp_eq_f32_e64 s[0:1], v1, v2
v_cmpx_eq_f32_e32 vcc, v1, v2
v_cmp_le_f32_e32 vcc, v1, v2
v_cmp_le_f32_e64 s[0:1], v1, v2
v_cmpx_le_f32_e32 vcc, v1, v2
v_cmp_gt_f32_e32 vcc, v1, v2
v_cmp_gt_f32_e64 s[0:1], v1, v2
v_cmpx_gt_f32_e32 vcc, v1, v2
v_cmp_lg_f32_e32 vcc, v1, v2
v_cmp_lg_f32_e64 s[0:1], v1, v2
v_cmpx_lg_f32_e32 vcc, v1, v2
v_cmp_ge_f32_e32 vcc, v1, v2
v_cmp_ge_f32_e64 s[0:1], v1, v2
v_cmpx_ge_f32_e32 vcc, v1, v2
v_cmp_o_f32_e32 vcc, v1, v2
v_cmp_o_f32_e64 s[0:1], v1, v2
v_cmpx_o_f32_e32 vcc, v1, v2
v_cmp_u_f32_e32 vcc, v1, v2
v_cmp_u_f32_e64 s[0:1], v1, v2
v_cmpx_u_f32_e32 vcc, v1, v2
v_cmp_nge_f32_e32 vcc, v1, v2
v_cmp_nge_f32_e64 s[0:1], v1, v2
v_cmpx_nge_f32_e32 vcc, v1, v2
v_cmp_nlg_f32_e32 vcc, v1, v2
v_cmp_nlg_f32_e64 s[0:1], v1, v2
v_cmpx_nlg_f32_e32 vcc, v1, v2
v_cmp_ngt_f32_e32 vcc, v1, v2
v_cmp_ngt_f32_e64 s[0:1], v1, v2
v_cmpx_ngt_f32_e32 vcc, v1, v2
v_cmp_nle_f32_e32 vcc, v1, v2
v_cmp_nle_f32_e64 s[0:1], v1, v2
v_cmpx_nle_f32_e32 vcc, v1, v2
v_cmp_neq_f32_e32 vcc, v1, v2
v_cmp_neq_f32_e64 s[0:1], v1, v2
v_cmpx_neq_f32_e32 vcc, v1, v2
v_cmp_nlt_f32_e32 vcc, v1, v2
v_cmp_nlt_f32_e64 s[0:1], v1, v2
v_cmpx_nlt_f32_e32 vcc, v1, v2
v_cmp_tru_f32_e32 vcc, v1, v2
v_cmp_tru_f32_e64 s[0:1], v1, v2
v_cmpx_tru_f32_e32 vcc, v1, v2
v_cmp_class_f32_e32 vcc, v1, v6
v_cmp_class_f32_e64 s[0:1], v1, v6
v_cmp_f_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_f_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_f_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_lt_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_lt_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_lt_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_eq_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_eq_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_eq_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_le_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_le_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_le_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_gt_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_gt_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_gt_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_lg_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_lg_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_lg_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_ge_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_ge_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_ge_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_o_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_o_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_o_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_u_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_u_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_u_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_nge_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_nge_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_nge_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_nlg_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_nlg_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_nlg_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_ngt_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_ngt_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_ngt_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_nle_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_nle_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_nle_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_neq_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_neq_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_neq_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_nlt_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_nlt_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_nlt_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_tru_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_tru_f64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_tru_f64_e32 vcc, v[2:3], v[4:5]
v_cmp_class_f64_e32 vcc, v[2:3], v6
v_cmp_class_f64_e64 s[0:1], v[2:3], v6
v_cmp_f_i16_e32 vcc, v1, v2
v_cmp_f_i16_e64 s[0:1], v1, v2
v_cmpx_f_i16_e32 vcc, v1, v2
v_cmp_lt_i16_e32 vcc, v1, v2
v_cmp_lt_i16_e64 s[0:1], v1, v2
v_cmpx_lt_i16_e32 vcc, v1, v2
v_cmp_eq_i16_e32 vcc, v1, v2
v_cmp_eq_i16_e64 s[0:1], v1, v2
v_cmpx_eq_i16_e32 vcc, v1, v2
v_cmp_le_i16_e32 vcc, v1, v2
v_cmp_le_i16_e64 s[0:1], v1, v2
v_cmpx_le_i16_e32 vcc, v1, v2
v_cmp_gt_i16_e32 vcc, v1, v2
v_cmp_gt_i16_e64 s[0:1], v1, v2
v_cmpx_gt_i16_e32 vcc, v1, v2
v_cmp_ne_i16_e32 vcc, v1, v2
v_cmp_ne_i16_e64 s[0:1], v1, v2
v_cmpx_ne_i16_e32 vcc, v1, v2
v_cmp_ge_i16_e32 vcc, v1, v2
v_cmp_ge_i16_e64 s[0:1], v1, v2
v_cmpx_ge_i16_e32 vcc, v1, v2
v_cmp_t_i16_e32 vcc, v1, v2
v_cmp_t_i16_e64 s[0:1], v1, v2
v_cmpx_t_i16_e32 vcc, v1, v2
v_cmp_f_u16_e32 vcc, v1, v2
v_cmp_f_u16_e64 s[0:1], v1, v2
v_cmpx_f_u16_e32 vcc, v1, v2
v_cmp_lt_u16_e32 vcc, v1, v2
v_cmp_lt_u16_e64 s[0:1], v1, v2
v_cmpx_lt_u16_e32 vcc, v1, v2
v_cmp_eq_u16_e32 vcc, v1, v2
v_cmp_eq_u16_e64 s[0:1], v1, v2
v_cmpx_eq_u16_e32 vcc, v1, v2
v_cmp_le_u16_e32 vcc, v1, v2
v_cmp_le_u16_e64 s[0:1], v1, v2
v_cmpx_le_u16_e32 vcc, v1, v2
v_cmp_gt_u16_e32 vcc, v1, v2
v_cmp_gt_u16_e64 s[0:1], v1, v2
v_cmpx_gt_u16_e32 vcc, v1, v2
v_cmp_ne_u16_e32 vcc, v1, v2
v_cmp_ne_u16_e64 s[0:1], v1, v2
v_cmpx_ne_u16_e32 vcc, v1, v2
v_cmp_ge_u16_e32 vcc, v1, v2
v_cmp_ge_u16_e64 s[0:1], v1, v2
v_cmpx_ge_u16_e32 vcc, v1, v2
v_cmp_t_u16_e32 vcc, v1, v2
v_cmp_t_u16_e64 s[0:1], v1, v2
v_cmpx_t_u16_e32 vcc, v1, v2
v_cmp_f_i32_e32 vcc, v1, v2
v_cmp_f_i32_e64 s[0:1], v1, v2
v_cmpx_f_i32_e32 vcc, v1, v2
v_cmp_lt_i32_e32 vcc, v1, v2
v_cmp_lt_i32_e64 s[0:1], v1, v2
v_cmpx_lt_i32_e32 vcc, v1, v2
v_cmp_eq_i32_e32 vcc, v1, v2
v_cmp_eq_i32_e64 s[0:1], v1, v2
v_cmpx_eq_i32_e32 vcc, v1, v2
v_cmp_le_i32_e32 vcc, v1, v2
v_cmp_le_i32_e64 s[0:1], v1, v2
v_cmpx_le_i32_e32 vcc, v1, v2
v_cmp_gt_i32_e32 vcc, v1, v2
v_cmp_gt_i32_e64 s[0:1], v1, v2
v_cmpx_gt_i32_e32 vcc, v1, v2
v_cmp_ne_i32_e32 vcc, v1, v2
v_cmp_ne_i32_e64 s[0:1], v1, v2
v_cmpx_ne_i32_e32 vcc, v1, v2
v_cmp_ge_i32_e32 vcc, v1, v2
v_cmp_ge_i32_e64 s[0:1], v1, v2
v_cmpx_ge_i32_e32 vcc, v1, v2
v_cmp_t_i32_e32 vcc, v1, v2
v_cmp_t_i32_e64 s[0:1], v1, v2
v_cmpx_t_i32_e32 vcc, v1, v2
v_cmp_f_u32_e32 vcc, v1, v2
v_cmp_f_u32_e64 s[0:1], v1, v2
v_cmpx_f_u32_e32 vcc, v1, v2
v_cmp_lt_u32_e32 vcc, v1, v2
v_cmp_lt_u32_e64 s[0:1], v1, v2
v_cmpx_lt_u32_e32 vcc, v1, v2
v_cmp_eq_u32_e32 vcc, v1, v2
v_cmp_eq_u32_e64 s[0:1], v1, v2
v_cmpx_eq_u32_e32 vcc, v1, v2
v_cmp_le_u32_e32 vcc, v1, v2
v_cmp_le_u32_e64 s[0:1], v1, v2
v_cmpx_le_u32_e32 vcc, v1, v2
v_cmp_gt_u32_e32 vcc, v1, v2
v_cmp_gt_u32_e64 s[0:1], v1, v2
v_cmpx_gt_u32_e32 vcc, v1, v2
v_cmp_ne_u32_e32 vcc, v1, v2
v_cmp_ne_u32_e64 s[0:1], v1, v2
v_cmpx_ne_u32_e32 vcc, v1, v2
v_cmp_ge_u32_e32 vcc, v1, v2
v_cmp_ge_u32_e64 s[0:1], v1, v2
v_cmpx_ge_u32_e32 vcc, v1, v2
v_cmp_t_u32_e32 vcc, v1, v2
v_cmp_t_u32_e64 s[0:1], v1, v2
v_cmpx_t_u32_e32 vcc, v1, v2
v_cmp_f_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_f_i64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_f_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_lt_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_lt_i64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_lt_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_eq_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_eq_i64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_eq_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_le_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_le_i64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_le_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_gt_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_gt_i64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_gt_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_ne_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_ne_i64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_ne_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_ge_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_ge_i64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_ge_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_t_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_t_i64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_t_i64_e32 vcc, v[2:3], v[4:5]
v_cmp_f_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_f_u64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_f_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_lt_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_lt_u64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_lt_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_eq_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_eq_u64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_eq_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_le_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_le_u64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_le_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_gt_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_gt_u64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_gt_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_ne_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_ne_u64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_ne_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_ge_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_ge_u64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_ge_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_t_u64_e32 vcc, v[2:3], v[4:5]
v_cmp_t_u64_e64 s[0:1], v[2:3], v[4:5]
v_cmpx_t_u64_e32 vcc, v[2:3], v[4:5]
global_load_ubyte v0, v[2:3], off
global_load_sbyte v0, v[2:3], off
global_load_ushort v0, v[2:3], off
global_load_sshort v0, v[2:3], off
global_load_dword v0, v[2:3], off
global_load_dwordx2 v[0:1], v[2:3], off
global_load_dwordx3 v[0:2], v[2:3], off
global_load_dwordx4 v[0:3], v[2:3], off
global_load_short_d16 v0, v[2:3], off
global_load_short_d16_hi v0, v[2:3], off
global_store_byte v[2:3], v4, off
global_store_short v[2:3], v4, off
global_store_dword v[2:3], v4, off
global_store_dwordx2 v[2:3], v[4:5], off
global_store_dwordx3 v[2:3], v[4:6], off
global_store_dwordx4 v[2:3], v[4:7], off
global_atomic_swap v0, v[2:3], v4, off glc
global_atomic_swap v[2:3], v4, off
global_atomic_swap_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_cmpswap v0, v[2:3], v[4:5], off glc
global_atomic_cmpswap v[2:3], v[4:5], off
global_atomic_cmpswap_x2 v[0:1], v[2:3], v[4:7], off glc
global_atomic_add v0, v[2:3], v4, off glc
global_atomic_add v[2:3], v4, off
global_atomic_add_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_sub v0, v[2:3], v4, off glc
global_atomic_sub v[2:3], v4, off
global_atomic_sub_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_smin v0, v[2:3], v4, off glc
global_atomic_smin v[2:3], v4, off
global_atomic_smin_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_umin v0, v[2:3], v4, off glc
global_atomic_umin v[2:3], v4, off
global_atomic_umin_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_smax v0, v[2:3], v4, off glc
global_atomic_smax v[2:3], v4, off
global_atomic_smax_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_umax v0, v[2:3], v4, off glc
global_atomic_umax v[2:3], v4, off
global_atomic_umax_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_and v0, v[2:3], v4, off glc
global_atomic_and v[2:3], v4, off
global_atomic_and_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_or v0, v[2:3], v4, off glc
global_atomic_or v[2:3], v4, off
global_atomic_or_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_xor v0, v[2:3], v4, off glc
global_atomic_xor v[2:3], v4, off
global_atomic_xor_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_inc v0, v[2:3], v4, off glc
global_atomic_inc v[2:3], v4, off
global_atomic_inc_x2 v[0:1], v[2:3], v[4:5], off glc
global_atomic_dec v0, v[2:3], v4, off glc
global_atomic_dec v[2:3], v4, off
global_atomic_dec_x2 v[0:1], v[2:3], v[4:5], off glc
flat_load_ubyte v0, v[2:3]
flat_load_sbyte v0, v[2:3]
flat_load_ushort v0, v[2:3]
flat_load_sshort v0, v[2:3]
flat_load_dword v0, v[2:3]
flat_load_dwordx2 v[0:1], v[2:3]
flat_load_dwordx3 v[0:2], v[2:3]
flat_load_dwordx4 v[0:3], v[2:3]
flat_load_short_d16 v0, v[2:3]
flat_load_short_d16_hi v0, v[2:3]
flat_store_byte v[2:3], v4
flat_store_short v[2:3], v4
flat_store_dword v[2:3], v4
flat_store_dwordx2 v[2:3], v[4:5]
flat_store_dwordx3 v[2:3], v[4:6]
flat_store_dwordx4 v[2:3], v[4:7]
flat_atomic_swap v0, v[2:3], v4 glc
flat_atomic_swap v[2:3], v4
flat_atomic_swap_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_cmpswap v0, v[2:3], v[4:5] glc
flat_atomic_cmpswap v[2:3], v[4:5]
flat_atomic_cmpswap_x2 v[0:1], v[2:3], v[4:7] glc
flat_atomic_add v0, v[2:3], v4 glc
flat_atomic_add v[2:3], v4
flat_atomic_add_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_sub v0, v[2:3], v4 glc
flat_atomic_sub v[2:3], v4
flat_atomic_sub_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_smin v0, v[2:3], v4 glc
flat_atomic_smin v[2:3], v4
flat_atomic_smin_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_umin v0, v[2:3], v4 glc
flat_atomic_umin v[2:3], v4
flat_atomic_umin_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_smax v0, v[2:3], v4 glc
flat_atomic_smax v[2:3], v4
flat_atomic_smax_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_umax v0, v[2:3], v4 glc
flat_atomic_umax v[2:3], v4
flat_atomic_umax_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_and v0, v[2:3], v4 glc
flat_atomic_and v[2:3], v4
flat_atomic_and_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_or v0, v[2:3], v4 glc
flat_atomic_or v[2:3], v4
flat_atomic_or_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_xor v0, v[2:3], v4 glc
flat_atomic_xor v[2:3], v4
flat_atomic_xor_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_inc v0, v[2:3], v4 glc
flat_atomic_inc v[2:3], v4
flat_atomic_inc_x2 v[0:1], v[2:3], v[4:5] glc
flat_atomic_dec v0, v[2:3], v4 glc
flat_atomic_dec v[2:3], v4
flat_atomic_dec_x2 v[0:1], v[2:3], v[4:5] glc
global_load_dword v0, v1, s[2:3]
global_store_dword v1, v4, s[2:3]
scratch_load_dword v0, v1, off
scratch_load_dword v0, off, s2
scratch_load_dwordx2 v[0:1], v1, off
scratch_load_dwordx2 v[0:1], off, s2
scratch_load_dwordx4 v[0:3], v1, off
scratch_load_dwordx4 v[0:3], off, s2
scratch_store_dword v1, v4, off
scratch_store_dword off, v4, s2
scratch_store_dwordx2 v1, v[4:5], off
scratch_store_dwordx2 off, v[4:5], s2
scratch_store_dwordx4 v1, v[4:7], off
scratch_store_dwordx4 off, v[4:7], s2
buffer_load_dword v0, off, s[0:3], 0 offset:4
buffer_load_dword v0, v1, s[0:3], 0 offen offset:4
buffer_store_dword v0, off, s[0:3], 0 offset:4
buffer_store_dword v0, v1, s[0:3], 0 offen offset:4
buffer_load_dwordx2 v[0:1], off, s[0:3], 0
buffer_store_dwordx2 v[0:1], off, s[0:3], 0
buffer_load_dwordx4 v[0:3], off, s[0:3], 0
buffer_store_dwordx4 v[0:3], off, s[0:3], 0
ds_write_b32 v0, v1 offset:8
ds_write_b64 v0, v[2:3] offset:8
ds_write_b96 v0, v[2:4] offset:8
ds_write_b128 v0, v[4:7] offset:8
ds_write2_b32 v0, v1, v2 offset1:4
ds_write2st64_b32 v0, v1, v2 offset1:4
ds_write2_b64 v0, v[2:3], v[4:5] offset1:4
ds_write_b16 v0, v1
ds_write_b8 v0, v1
ds_read_b32 v0, v1
ds_read_b64 v[0:1], v2
ds_read_b96 v[0:2], v3
ds_read_b128 v[0:3], v4
ds_read2_b32 v[0:1], v2 offset1:4
ds_read2st64_b32 v[0:1], v2 offset1:4
ds_read2_b64 v[0:3], v4 offset1:4
ds_read_u16 v0, v1
ds_read_i16 v0, v1
ds_read_u8 v0, v1
ds_read_i8 v0, v1
ds_add_u32 v0, v1
ds_add_rtn_u32 v2, v0, v1
ds_sub_u32 v0, v1
ds_sub_rtn_u32 v2, v0, v1
ds_inc_u32 v0, v1
ds_inc_rtn_u32 v2, v0, v1
ds_dec_u32 v0, v1
ds_dec_rtn_u32 v2, v0, v1
ds_min_i32 v0, v1
ds_min_rtn_i32 v2, v0, v1
ds_min_u32 v0, v1
ds_min_rtn_u32 v2, v0, v1
ds_max_i32 v0, v1
ds_max_rtn_i32 v2, v0, v1
ds_max_u32 v0, v1
ds_max_rtn_u32 v2, v0, v1
ds_and_b32 v0, v1
ds_and_rtn_b32 v2, v0, v1
ds_or_b32 v0, v1
ds_or_rtn_b32 v2, v0, v1
ds_xor_b32 v0, v1
ds_xor_rtn_b32 v2, v0, v1
s_ff1_i32_b64 s0, s[2:3]
s_ff0_i32_b64 s0, s[2:3]
s_flbit_i32_b64 s0, s[2:3]
s_bcnt1_i32_b64 s0, s[2:3]
s_bcnt0_i32_b64 s0, s[2:3]
s_bitset0_b32 s0, s1
s_bitset1_b32 s0, s1
s_bitset0_b64 s[0:1], s2
s_bitset1_b64 s[0:1], s2
v_mbcnt_lo_u32_b32 v0, v1, v2
v_mbcnt_hi_u32_b32 v0, v1, v2
v_mov_b64_e32 v[0:1], v[2:3]
ds_bpermute_b32 v0, v1, v2
ds_permute_b32 v0, v1, v2
v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:[0,1]
v_med3_f32 v0, v1, v2, v3
v_med3_i32 v0, v1, v2, v3
v_med3_u32 v0, v1, v2, v3
v_sin_f32_e32 v0, v1
v_cos_f32_e32 v0, v1
v_frexp_mant_f32_e32 v0, v1
v_frexp_exp_i32_f32_e32 v0, v1
buffer_wbinvl1_vol
buffer_wbinvl1
buffer_wbl2
buffer_inv
s_mov_b64 s[0:1], src_shared_base
s_mov_b64 s[0:1], src_private_base
s_mov_b32 s0, src_shared_base
