// Index micro-kernel of the AMD fault-injection tests (target line, and
// `.set PACKED, 0|1`, added by build.sh): the kernel reads every index it
// uses in an instruction that is neither a copy nor a mask of it, so a
// fault that corrupts the read's result differs from one that corrupts the
// index. Workgroup (bx, by) of a 3 x 2 grid, block 64 x 2 (wave w is
// ty = w), work-item (tx, ty):
//   W = bx + 3 * by                (s_mul reads by first, s_add bx)
//   L = tx + 64 * ty               (gfx90a+: v_lshrrev reads the packed v0
//                                   first; gfx908: v_lshl_add reads v0, v1)
//   out[128 * W + L] = 0x01000000 | by << 16 | bx << 12 | L
  .text
  .globl index
  .p2align 8
  .type index,@function
index:
.if PACKED
  v_lshrrev_b32_e32 v2, 10, v0
  v_and_b32_e32 v3, 0x3ff, v0
  v_lshl_add_u32 v3, v2, 6, v3
.else
  v_lshl_add_u32 v3, v1, 6, v0
.endif
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_mul_i32 s7, s3, 3
  s_add_i32 s7, s7, s2
  s_lshl_b32 s8, s7, 7
  v_add_u32_e32 v4, s8, v3
  s_lshl_b32 s9, s3, 16
  s_lshl_b32 s10, s2, 12
  s_or_b32 s9, s9, s10
  s_or_b32 s9, s9, 0x1000000
  v_or_b32_e32 v5, s9, v3
  v_lshlrev_b32_e32 v6, 2, v4
  s_waitcnt lgkmcnt(0)
  global_store_dword v6, v5, s[4:5]
  s_endpgm
.Lindex_end:
  .size index, .Lindex_end-index

  .rodata
  .p2align 6
// the descriptor; gfx90a+ name where their accumulation registers start
.macro descriptor accum:vararg
  .amdhsa_kernel index
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_system_sgpr_workgroup_id_y 1
    .amdhsa_system_vgpr_workitem_id 1
    .amdhsa_next_free_vgpr 8
    .amdhsa_next_free_sgpr 12
    \accum
    .amdhsa_kernarg_size 8
  .end_amdhsa_kernel
.endm
.if PACKED
  descriptor .amdhsa_accum_offset 8
.else
  descriptor
.endif

  .amdgpu_metadata
---
amdhsa.version: [1, 2]
amdhsa.kernels:
  - .name: index
    .symbol: index.kd
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 14
    .vgpr_count: 8
    .max_flat_workgroup_size: 128
    .args:
      - {.name: out, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global}
...
  .end_amdgpu_metadata
