//! The runtime's entry for every table slot: the functions it implements
//! (by area, in the submodules, imported by name below) and, for the rest,
//! the generated `unsupported` entries (which names imported here shadow).
//!
//! Safety of every entry: the HSA API's contract for that function (each
//! pointer valid for what the header says it points to).

#![allow(clippy::missing_safety_doc)]

mod code;
mod memory;
pub(crate) mod queues;
mod signals;
mod system;

pub use super::generated::unsupported::*;
pub use code::{
    hsa_code_object_deserialize, hsa_code_object_destroy, hsa_code_object_reader_create_from_file,
    hsa_code_object_reader_create_from_memory, hsa_code_object_reader_destroy, hsa_executable_create,
    hsa_executable_create_alt, hsa_executable_destroy, hsa_executable_freeze, hsa_executable_get_info,
    hsa_executable_get_symbol, hsa_executable_get_symbol_by_name, hsa_executable_iterate_agent_symbols,
    hsa_executable_iterate_program_symbols, hsa_executable_iterate_symbols, hsa_executable_load_agent_code_object,
    hsa_executable_load_code_object, hsa_executable_load_program_code_object, hsa_executable_symbol_get_info,
    hsa_executable_validate, hsa_executable_validate_alt,
};
pub use memory::{
    hsa_amd_agents_allow_access, hsa_amd_memory_async_copy, hsa_amd_memory_fill, hsa_amd_memory_lock,
    hsa_amd_memory_lock_to_pool, hsa_amd_memory_pool_allocate, hsa_amd_memory_pool_can_migrate,
    hsa_amd_memory_pool_free, hsa_amd_memory_unlock, hsa_amd_pointer_info, hsa_amd_pointer_info_set_userdata,
    hsa_memory_allocate, hsa_memory_assign_agent, hsa_memory_copy, hsa_memory_deregister, hsa_memory_free,
    hsa_memory_register,
};
pub use queues::{
    hsa_amd_profiling_async_copy_enable, hsa_amd_profiling_convert_tick_to_system_domain,
    hsa_amd_profiling_get_dispatch_time, hsa_amd_profiling_set_profiler_enabled, hsa_amd_queue_cu_set_mask,
    hsa_amd_queue_intercept_create, hsa_amd_queue_intercept_register, hsa_amd_queue_set_priority,
    hsa_queue_add_write_index_relaxed, hsa_queue_add_write_index_scacq_screl, hsa_queue_add_write_index_scacquire,
    hsa_queue_add_write_index_screlease, hsa_queue_cas_write_index_relaxed, hsa_queue_cas_write_index_scacq_screl,
    hsa_queue_cas_write_index_scacquire, hsa_queue_cas_write_index_screlease, hsa_queue_create, hsa_queue_destroy,
    hsa_queue_inactivate, hsa_queue_load_read_index_relaxed, hsa_queue_load_read_index_scacquire,
    hsa_queue_load_write_index_relaxed, hsa_queue_load_write_index_scacquire, hsa_queue_store_read_index_relaxed,
    hsa_queue_store_read_index_screlease, hsa_queue_store_write_index_relaxed, hsa_queue_store_write_index_screlease,
};
pub use signals::{
    hsa_amd_async_function, hsa_amd_signal_async_handler, hsa_amd_signal_create, hsa_amd_signal_value_pointer,
    hsa_amd_signal_wait_any, hsa_signal_add_relaxed, hsa_signal_add_scacq_screl, hsa_signal_add_scacquire,
    hsa_signal_add_screlease, hsa_signal_and_relaxed, hsa_signal_and_scacq_screl, hsa_signal_and_scacquire,
    hsa_signal_and_screlease, hsa_signal_cas_relaxed, hsa_signal_cas_scacq_screl, hsa_signal_cas_scacquire,
    hsa_signal_cas_screlease, hsa_signal_create, hsa_signal_destroy, hsa_signal_exchange_relaxed,
    hsa_signal_exchange_scacq_screl, hsa_signal_exchange_scacquire, hsa_signal_exchange_screlease,
    hsa_signal_group_create, hsa_signal_group_destroy, hsa_signal_group_wait_any_relaxed,
    hsa_signal_group_wait_any_scacquire, hsa_signal_load_relaxed, hsa_signal_load_scacquire, hsa_signal_or_relaxed,
    hsa_signal_or_scacq_screl, hsa_signal_or_scacquire, hsa_signal_or_screlease, hsa_signal_silent_store_relaxed,
    hsa_signal_silent_store_screlease, hsa_signal_store_relaxed, hsa_signal_store_screlease,
    hsa_signal_subtract_relaxed, hsa_signal_subtract_scacq_screl, hsa_signal_subtract_scacquire,
    hsa_signal_subtract_screlease, hsa_signal_wait_relaxed, hsa_signal_wait_scacquire, hsa_signal_xor_relaxed,
    hsa_signal_xor_scacq_screl, hsa_signal_xor_scacquire, hsa_signal_xor_screlease,
};
pub use system::{
    hsa_agent_extension_supported, hsa_agent_get_info, hsa_agent_iterate_isas, hsa_agent_iterate_regions,
    hsa_agent_major_extension_supported, hsa_amd_agent_iterate_memory_pools, hsa_amd_agent_memory_pool_get_info,
    hsa_amd_memory_pool_get_info, hsa_amd_register_system_event_handler, hsa_extension_get_name, hsa_init,
    hsa_isa_from_name, hsa_isa_get_info, hsa_isa_get_info_alt, hsa_iterate_agents, hsa_region_get_info, hsa_shut_down,
    hsa_status_string, hsa_system_extension_supported, hsa_system_get_extension_table, hsa_system_get_info,
    hsa_system_get_major_extension_table, hsa_system_major_extension_supported,
};
