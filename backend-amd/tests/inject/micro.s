// Micro-kernel of the AMD fault-injection tests (target line added by
// build.sh). Work-item t of workgroup w (64 work-items per wave, block of
// 128): g = 128 * w + t, then
//   a = g + k                      (v_add_u32: IOC, IRA, IAL targets)
//   b = a ^ 0x55                   (an immediate: IIO)
//   c = (t < 8) << 16              (a compare's lane mask: WV)
//   r = b | c, written to LDS at 4 * t and read back (IMD, IMS)
//   out[g] = r
// k comes from the kernel arguments through a scalar load (IMS on constant
// memory).
  .text
  .globl micro
  .p2align 8
  .type micro,@function
micro:
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dword s6, s[0:1], 0x8
  s_mov_b32 s7, s2
  v_and_b32_e32 v1, 0x3ff, v0
  s_lshl_b32 s8, s7, 7
  v_add_u32_e32 v2, s8, v1
  v_mov_b32_e32 v3, 0x1234
  s_waitcnt lgkmcnt(0)
  v_add_u32_e32 v3, s6, v2
  v_xor_b32_e32 v4, 0x55, v3
  v_cmp_gt_u32_e64 s[10:11], 8, v1
  v_cndmask_b32_e64 v5, 0, 1, s[10:11]
  v_lshlrev_b32_e32 v5, 16, v5
  v_or_b32_e32 v4, v4, v5
  v_lshlrev_b32_e32 v7, 2, v1
  ds_write_b32 v7, v4
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v8, v7
  v_lshlrev_b32_e32 v6, 2, v2
  s_waitcnt lgkmcnt(0)
  global_store_dword v6, v8, s[4:5]
  s_endpgm
.Lmicro_end:
  .size micro, .Lmicro_end-micro

  .rodata
  .p2align 6
  .amdhsa_kernel micro
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_next_free_vgpr 10
    .amdhsa_next_free_sgpr 12
    .amdhsa_accum_offset 12
    .amdhsa_group_segment_fixed_size 512
    .amdhsa_kernarg_size 16
  .end_amdhsa_kernel

  .amdgpu_metadata
---
amdhsa.version: [1, 2]
amdhsa.kernels:
  - .name: micro
    .symbol: micro.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 512
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 14
    .vgpr_count: 10
    .max_flat_workgroup_size: 128
    .args:
      - {.name: out, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global}
      - {.name: k, .offset: 8, .size: 4, .value_kind: by_value}
...
  .end_amdgpu_metadata
