//! The agents, ISAs and memory the runtime reports: one CPU agent and one
//! GPU agent of the configured target, the GPU's ISA, and four memory
//! objects (each both a region and a memory pool, as in AMD's runtime):
//! system memory fine-grained (the kernarg region) and coarse-grained,
//! owned by the CPU; "device" memory and the group segment, owned by the
//! GPU. All device memory is host memory: the emulator runs kernels on it.
//! Values follow what AMD's runtime reports for a CDNA GPU where the
//! headers leave a choice (queue sizes, wave size, workgroup limits).

use crate::ffi::generated::*;
use xfpx_amd_isa::Target;

/// A value of an `*_get_info` attribute, written by the entry points.
#[derive(Debug, Clone, PartialEq)]
pub enum Info {
    U16(u16),
    U32(u32),
    U64(u64),
    Bool(bool),
    /// A string in a fixed buffer of this many bytes (NUL-padded).
    Text(String, usize),
    /// Raw bytes (arrays, small structs).
    Bytes(Vec<u8>),
}

/// Handles are fixed non-zero numbers.
const CPU_HANDLE: u64 = 0x7866_7078_0001;
const GPU_HANDLE: u64 = 0x7866_7078_0002;
const ISA_HANDLE_BASE: u64 = 0x7866_7078_0100;
const POOL_HANDLE_BASE: u64 = 0x7866_7078_0200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    Cpu,
    Gpu,
}

impl Agent {
    pub const ALL: [Agent; 2] = [Agent::Cpu, Agent::Gpu];

    pub fn handle(self) -> u64 {
        match self {
            Agent::Cpu => CPU_HANDLE,
            Agent::Gpu => GPU_HANDLE,
        }
    }

    pub fn from_handle(h: u64) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.handle() == h)
    }
}

/// The ISA of the GPU agent (`hsa_isa_t`).
pub fn isa_handle(target: Target) -> u64 {
    ISA_HANDLE_BASE + u64::from(target.mask().trailing_zeros())
}

pub fn isa_from_handle(h: u64) -> Option<Target> {
    [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950].into_iter().find(|&t| isa_handle(t) == h)
}

/// The ISA name AMD's runtime reports for the target (SRAM ECC on, XNACK
/// off, as on MI100/MI200/MI300/MI350 boards).
pub fn isa_name(target: Target) -> String {
    format!("amdgcn-amd-amdhsa--{}:sramecc+:xnack-", target.name())
}

/// The ISA of an ISA name (`amdgcn-amd-amdhsa--gfx942`, with or without
/// feature settings).
pub fn isa_from_name(name: &str) -> Option<Target> {
    let processor = name.strip_prefix("amdgcn-amd-amdhsa--")?.split(':').next()?;
    Target::from_name(processor)
}

pub const WAVEFRONT_SIZE: u32 = 64;
pub const WORKGROUP_MAX_SIZE: u32 = 1024;
pub const GRID_MAX_SIZE: u32 = u32::MAX;
pub const QUEUE_MIN_SIZE: u32 = 64;
pub const QUEUE_MAX_SIZE: u32 = 131072;
pub const QUEUES_MAX: u32 = 128;
pub const GROUP_SEGMENT_SIZE: u32 = 64 * 1024;

fn dims_u16(v: [u16; 3]) -> Info {
    Info::Bytes(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}

fn dim3(v: [u32; 3]) -> Info {
    Info::Bytes(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}

/// The value of `hsa_agent_get_info` attribute `attr`, None where the
/// runtime does not know it.
pub fn agent_info(agent: Agent, target: Target, attr: hsa_agent_info_t) -> Option<Info> {
    let gpu = agent == Agent::Gpu;
    let cus = xfpx_amd_emu::placement::default_compute_units(target);
    Some(match attr {
        HSA_AGENT_INFO_NAME => Info::Text(if gpu { target.name().into() } else { "xfpx host CPU".into() }, 64),
        HSA_AGENT_INFO_VENDOR_NAME => Info::Text(if gpu { "AMD".into() } else { "CPU".into() }, 64),
        HSA_AGENT_INFO_FEATURE => {
            Info::U32(if gpu { HSA_AGENT_FEATURE_KERNEL_DISPATCH } else { HSA_AGENT_FEATURE_AGENT_DISPATCH })
        }
        HSA_AGENT_INFO_MACHINE_MODEL => Info::U32(HSA_MACHINE_MODEL_LARGE),
        HSA_AGENT_INFO_PROFILE => Info::U32(HSA_PROFILE_BASE),
        HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE => Info::U32(HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR),
        HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => Info::U32(HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR),
        HSA_AGENT_INFO_FAST_F16_OPERATION => Info::Bool(gpu),
        HSA_AGENT_INFO_WAVEFRONT_SIZE => Info::U32(if gpu { WAVEFRONT_SIZE } else { 0 }),
        HSA_AGENT_INFO_WORKGROUP_MAX_DIM => dims_u16(if gpu { [1024; 3] } else { [0; 3] }),
        HSA_AGENT_INFO_WORKGROUP_MAX_SIZE => Info::U32(if gpu { WORKGROUP_MAX_SIZE } else { 0 }),
        HSA_AGENT_INFO_GRID_MAX_DIM => dim3(if gpu { [u32::MAX; 3] } else { [0; 3] }),
        HSA_AGENT_INFO_GRID_MAX_SIZE => Info::U32(if gpu { GRID_MAX_SIZE } else { 0 }),
        HSA_AGENT_INFO_FBARRIER_MAX_SIZE => Info::U32(if gpu { 32 } else { 0 }),
        HSA_AGENT_INFO_QUEUES_MAX => Info::U32(if gpu { QUEUES_MAX } else { 0 }),
        HSA_AGENT_INFO_QUEUE_MIN_SIZE => Info::U32(if gpu { QUEUE_MIN_SIZE } else { 0 }),
        HSA_AGENT_INFO_QUEUE_MAX_SIZE => Info::U32(if gpu { QUEUE_MAX_SIZE } else { 0 }),
        HSA_AGENT_INFO_QUEUE_TYPE => Info::U32(HSA_QUEUE_TYPE_MULTI),
        HSA_AGENT_INFO_NODE => Info::U32(if gpu { 1 } else { 0 }),
        HSA_AGENT_INFO_DEVICE => Info::U32(if gpu { HSA_DEVICE_TYPE_GPU } else { HSA_DEVICE_TYPE_CPU }),
        HSA_AGENT_INFO_CACHE_SIZE => Info::Bytes(if gpu {
            [16u32 * 1024, 8 * 1024 * 1024, 0, 0].iter().flat_map(|x| x.to_le_bytes()).collect()
        } else {
            vec![0; 16]
        }),
        HSA_AGENT_INFO_ISA => Info::U64(if gpu { isa_handle(target) } else { 0 }),
        HSA_AGENT_INFO_EXTENSIONS => Info::Bytes(extension_mask()),
        HSA_AGENT_INFO_VERSION_MAJOR => Info::U16(1),
        HSA_AGENT_INFO_VERSION_MINOR => Info::U16(1),
        HSA_AMD_AGENT_INFO_CHIP_ID => Info::U32(0),
        HSA_AMD_AGENT_INFO_CACHELINE_SIZE => Info::U32(if gpu { 128 } else { 64 }),
        HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT => Info::U32(if gpu { cus } else { 1 }),
        HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY => Info::U32(if gpu { 2100 } else { 1000 }),
        HSA_AMD_AGENT_INFO_DRIVER_NODE_ID => Info::U32(if gpu { 1 } else { 0 }),
        HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS => Info::U32(0),
        HSA_AMD_AGENT_INFO_BDFID => Info::U32(0),
        HSA_AMD_AGENT_INFO_MEMORY_WIDTH => Info::U32(0),
        HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY => Info::U32(0),
        HSA_AMD_AGENT_INFO_PRODUCT_NAME => Info::Text(
            if gpu { format!("xfpx emulated {} (CDNA emulator)", target.name()) } else { "xfpx host CPU".into() },
            64,
        ),
        HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU => Info::U32(if gpu { 32 } else { 0 }),
        HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU => Info::U32(if gpu { 4 } else { 0 }),
        HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES => Info::U32(if gpu { 8 } else { 0 }),
        HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE => Info::U32(if gpu { 1 } else { 0 }),
        HSA_AMD_AGENT_INFO_DOMAIN => Info::U32(0),
        HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES => Info::Bool(false),
        HSA_AMD_AGENT_INFO_UUID => Info::Text(if gpu { "GPU-XX".into() } else { "CPU-XX".into() }, 21),
        HSA_AMD_AGENT_INFO_ASIC_REVISION => Info::U32(0),
        HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS => Info::Bool(true),
        HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT => Info::U32(if gpu { cus } else { 0 }),
        _ => return None,
    })
}

/// The extensions the runtime offers, as the 128-byte bit mask of
/// `HSA_SYSTEM_INFO_EXTENSIONS` (the AMD loader extension).
pub fn extension_mask() -> Vec<u8> {
    let mut mask = vec![0u8; 128];
    let bit = HSA_EXTENSION_AMD_LOADER as usize;
    mask[bit / 8] |= 1 << (bit % 8);
    mask
}

/// `hsa_isa_get_info_alt` of the target's ISA.
pub fn isa_info(target: Target, attr: hsa_isa_info_t) -> Option<Info> {
    let name = isa_name(target);
    Some(match attr {
        HSA_ISA_INFO_NAME_LENGTH => Info::U32(name.len() as u32),
        HSA_ISA_INFO_NAME => Info::Text(name.clone(), name.len()),
        HSA_ISA_INFO_MACHINE_MODELS => Info::Bytes(vec![0, 1]),
        HSA_ISA_INFO_PROFILES => Info::Bytes(vec![1, 0]),
        HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES => Info::Bytes(vec![1, 0, 1]),
        HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => Info::Bytes(vec![1, 0, 1]),
        HSA_ISA_INFO_FAST_F16_OPERATION => Info::Bool(true),
        HSA_ISA_INFO_WORKGROUP_MAX_DIM => dims_u16([1024; 3]),
        HSA_ISA_INFO_WORKGROUP_MAX_SIZE => Info::U32(WORKGROUP_MAX_SIZE),
        HSA_ISA_INFO_GRID_MAX_DIM => dim3([u32::MAX; 3]),
        HSA_ISA_INFO_GRID_MAX_SIZE => Info::U64(u64::from(GRID_MAX_SIZE)),
        HSA_ISA_INFO_FBARRIER_MAX_SIZE => Info::U32(32),
        _ => return None,
    })
}

/// A memory object: a region and a memory pool at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pool {
    /// System memory, fine-grained; holds kernel arguments.
    SystemFine,
    SystemCoarse,
    /// The GPU's "device" memory (host memory here), coarse-grained.
    GpuLocal,
    /// The group segment (LDS): reported, not allocatable.
    GpuGroup,
}

impl Pool {
    pub const ALL: [Pool; 4] = [Pool::SystemFine, Pool::SystemCoarse, Pool::GpuLocal, Pool::GpuGroup];

    pub fn handle(self) -> u64 {
        POOL_HANDLE_BASE + Pool::ALL.iter().position(|&p| p == self).unwrap_or(0) as u64
    }

    pub fn from_handle(h: u64) -> Option<Pool> {
        Pool::ALL.into_iter().find(|p| p.handle() == h)
    }

    pub fn owner(self) -> Agent {
        match self {
            Pool::SystemFine | Pool::SystemCoarse => Agent::Cpu,
            Pool::GpuLocal | Pool::GpuGroup => Agent::Gpu,
        }
    }

    pub fn allocatable(self) -> bool {
        self != Pool::GpuGroup
    }

    pub fn fine_grained(self) -> bool {
        self == Pool::SystemFine
    }
}

/// The regions `hsa_agent_iterate_regions` visits: the agent's own, and for
/// the GPU also the system regions it can reach (as AMD's runtime does).
pub fn regions(agent: Agent) -> &'static [Pool] {
    match agent {
        Agent::Cpu => &[Pool::SystemFine, Pool::SystemCoarse],
        Agent::Gpu => &[Pool::GpuLocal, Pool::GpuGroup, Pool::SystemFine, Pool::SystemCoarse],
    }
}

/// The memory pools `hsa_amd_agent_iterate_memory_pools` visits: the agent's own.
pub fn pools(agent: Agent) -> &'static [Pool] {
    match agent {
        Agent::Cpu => &[Pool::SystemFine, Pool::SystemCoarse],
        Agent::Gpu => &[Pool::GpuLocal, Pool::GpuGroup],
    }
}

/// Allocation granule and alignment of every pool.
pub const ALLOC_GRANULE: usize = 4096;
/// The size each global pool reports (and its largest allocation).
pub const POOL_SIZE: u64 = 16 << 30;

/// `hsa_region_get_info`.
pub fn region_info(pool: Pool, attr: hsa_region_info_t) -> Option<Info> {
    let group = pool == Pool::GpuGroup;
    Some(match attr {
        HSA_REGION_INFO_SEGMENT => Info::U32(if group { HSA_REGION_SEGMENT_GROUP } else { HSA_REGION_SEGMENT_GLOBAL }),
        HSA_REGION_INFO_GLOBAL_FLAGS => Info::U32(match pool {
            Pool::SystemFine => HSA_REGION_GLOBAL_FLAG_KERNARG | HSA_REGION_GLOBAL_FLAG_FINE_GRAINED,
            Pool::SystemCoarse | Pool::GpuLocal => HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED,
            Pool::GpuGroup => 0,
        }),
        HSA_REGION_INFO_SIZE => Info::U64(if group { u64::from(GROUP_SEGMENT_SIZE) } else { POOL_SIZE }),
        HSA_REGION_INFO_ALLOC_MAX_SIZE => Info::U64(if group { u64::from(GROUP_SEGMENT_SIZE) } else { POOL_SIZE }),
        HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE => Info::U32(0),
        HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED => Info::Bool(pool.allocatable()),
        HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE => Info::U64(if group { 0 } else { ALLOC_GRANULE as u64 }),
        HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT => Info::U64(if group { 0 } else { ALLOC_GRANULE as u64 }),
        HSA_AMD_REGION_INFO_HOST_ACCESSIBLE => Info::Bool(!group),
        HSA_AMD_REGION_INFO_BASE => Info::U64(0),
        HSA_AMD_REGION_INFO_BUS_WIDTH => Info::U32(0),
        HSA_AMD_REGION_INFO_MAX_CLOCK_FREQUENCY => Info::U32(0),
        _ => return None,
    })
}

/// `hsa_amd_memory_pool_get_info`.
pub fn pool_info(pool: Pool, attr: hsa_amd_memory_pool_info_t) -> Option<Info> {
    let group = pool == Pool::GpuGroup;
    Some(match attr {
        HSA_AMD_MEMORY_POOL_INFO_SEGMENT => {
            Info::U32(if group { HSA_AMD_SEGMENT_GROUP } else { HSA_AMD_SEGMENT_GLOBAL })
        }
        HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS => Info::U32(match pool {
            Pool::SystemFine => {
                HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
            }
            Pool::SystemCoarse | Pool::GpuLocal => HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
            Pool::GpuGroup => 0,
        }),
        HSA_AMD_MEMORY_POOL_INFO_SIZE => Info::U64(if group { u64::from(GROUP_SEGMENT_SIZE) } else { POOL_SIZE }),
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED => Info::Bool(pool.allocatable()),
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE => Info::U64(if group { 0 } else { ALLOC_GRANULE as u64 }),
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => Info::U64(if group { 0 } else { ALLOC_GRANULE as u64 }),
        HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL => Info::Bool(pool.owner() == Agent::Cpu),
        HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE => Info::U64(if group { 0 } else { POOL_SIZE }),
        _ => return None,
    })
}

/// `hsa_amd_agent_memory_pool_get_info`: the owner reaches its pools, the
/// GPU reaches system memory by default, the CPU reaches device memory
/// once allowed (`hsa_amd_agents_allow_access`; here all memory is the
/// host's, so access is never refused).
pub fn agent_pool_info(agent: Agent, pool: Pool, attr: hsa_amd_agent_memory_pool_info_t) -> Option<Info> {
    Some(match attr {
        HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS => Info::U32(if pool == Pool::GpuGroup && agent == Agent::Cpu {
            HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED
        } else if agent == pool.owner() || pool.owner() == Agent::Cpu {
            HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
        } else {
            HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
        }),
        HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS => Info::U32(u32::from(agent != pool.owner())),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_names_parse() {
        for a in Agent::ALL {
            assert_eq!(Agent::from_handle(a.handle()), Some(a));
        }
        for p in Pool::ALL {
            assert_eq!(Pool::from_handle(p.handle()), Some(p));
        }
        for t in [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
            assert_eq!(isa_from_handle(isa_handle(t)), Some(t));
            assert_eq!(isa_from_name(&isa_name(t)), Some(t));
        }
        assert_eq!(isa_from_name("amdgcn-amd-amdhsa--gfx90a"), Some(Target::Gfx90a));
        assert_eq!(isa_from_name("gfx90a"), None);
        assert_eq!(Agent::from_handle(0), None);
    }
}
