//! The runtime's C layouts equal the installed HSA headers' (ROCm 5.2,
//! libhsa-runtime-dev): every API table entry's offset and every table's
//! size, and the size and field offsets of each struct the runtime lays out
//! by hand, as a C++ program compiled against the headers prints them.

use hsa_runtime64::ffi::generated::{AmdExtTable, CoreApiTable, FinalizerExtTable, ImageExtTable};
use hsa_runtime64::ffi::table::{ApiTableVersion, HsaApiTable};
use hsa_runtime64::ffi::types::*;
use std::mem::{offset_of, size_of};
use std::process::Command;

/// (C struct, C field or "" for the size, the Rust value).
fn rust_layout() -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    let mut table = |name: &str, size: usize, offsets: Vec<(&'static str, usize)>| {
        out.push((name.to_string(), String::new(), size));
        for (f, o) in offsets {
            out.push((name.to_string(), f.to_string(), o));
        }
    };
    table("CoreApiTable", size_of::<CoreApiTable>(), CoreApiTable::offsets());
    table("AmdExtTable", size_of::<AmdExtTable>(), AmdExtTable::offsets());
    table("FinalizerExtTable", size_of::<FinalizerExtTable>(), FinalizerExtTable::offsets());
    table("ImageExtTable", size_of::<ImageExtTable>(), ImageExtTable::offsets());
    macro_rules! fields {
        ($c:literal, $t:ty, $( $cf:literal = $f:ident ),*) => {{
            out.push(($c.to_string(), String::new(), size_of::<$t>()));
            $( out.push(($c.to_string(), $cf.to_string(), offset_of!($t, $f))); )*
        }};
    }
    fields!("ApiTableVersion", ApiTableVersion, "major_id" = major_id, "minor_id" = minor_id, "step_id" = step_id);
    fields!(
        "HsaApiTable",
        HsaApiTable,
        "core_" = core_,
        "amd_ext_" = amd_ext_,
        "finalizer_ext_" = finalizer_ext_,
        "image_ext_" = image_ext_
    );
    fields!(
        "hsa_queue_t",
        hsa_queue_t,
        "type" = type_,
        "features" = features,
        "base_address" = base_address,
        "doorbell_signal" = doorbell_signal,
        "size" = size,
        "id" = id
    );
    fields!("hsa_dim3_t", hsa_dim3_t, "x" = x, "y" = y, "z" = z);
    fields!(
        "hsa_kernel_dispatch_packet_t",
        hsa_kernel_dispatch_packet_t,
        "header" = header,
        "setup" = setup,
        "workgroup_size_x" = workgroup_size_x,
        "workgroup_size_y" = workgroup_size_y,
        "workgroup_size_z" = workgroup_size_z,
        "grid_size_x" = grid_size_x,
        "grid_size_y" = grid_size_y,
        "grid_size_z" = grid_size_z,
        "private_segment_size" = private_segment_size,
        "group_segment_size" = group_segment_size,
        "kernel_object" = kernel_object,
        "kernarg_address" = kernarg_address,
        "completion_signal" = completion_signal
    );
    fields!(
        "hsa_barrier_and_packet_t",
        hsa_barrier_and_packet_t,
        "header" = header,
        "dep_signal" = dep_signal,
        "completion_signal" = completion_signal
    );
    fields!(
        "hsa_barrier_or_packet_t",
        hsa_barrier_or_packet_t,
        "header" = header,
        "dep_signal" = dep_signal,
        "completion_signal" = completion_signal
    );
    fields!(
        "hsa_agent_dispatch_packet_t",
        hsa_agent_dispatch_packet_t,
        "header" = header,
        "type" = type_,
        "return_address" = return_address,
        "arg" = arg,
        "completion_signal" = completion_signal
    );
    fields!(
        "amd_queue_t",
        amd_queue_t,
        "hsa_queue" = hsa_queue,
        "write_dispatch_id" = write_dispatch_id,
        "max_cu_id" = max_cu_id,
        "max_wave_id" = max_wave_id,
        "read_dispatch_id" = read_dispatch_id,
        "scratch_resource_descriptor" = scratch_resource_descriptor,
        "queue_properties" = queue_properties,
        "queue_inactive_signal" = queue_inactive_signal
    );
    fields!(
        "amd_signal_t",
        amd_signal_t,
        "kind" = kind,
        "value" = value,
        "event_mailbox_ptr" = event_mailbox_ptr,
        "event_id" = event_id,
        "start_ts" = start_ts,
        "end_ts" = end_ts,
        "queue_ptr" = queue_ptr
    );
    fields!(
        "hsa_amd_pointer_info_t",
        hsa_amd_pointer_info_t,
        "size" = size,
        "type" = type_,
        "agentBaseAddress" = agentBaseAddress,
        "hostBaseAddress" = hostBaseAddress,
        "sizeInBytes" = sizeInBytes,
        "userData" = userData,
        "agentOwner" = agentOwner,
        "global_flags" = global_flags
    );
    fields!("hsa_amd_profiling_dispatch_time_t", hsa_amd_profiling_dispatch_time_t, "start" = start, "end" = end);
    fields!(
        "hsa_ven_amd_loader_segment_descriptor_t",
        hsa_ven_amd_loader_segment_descriptor_t,
        "agent" = agent,
        "executable" = executable,
        "code_object_storage_type" = code_object_storage_type,
        "code_object_storage_base" = code_object_storage_base,
        "code_object_storage_size" = code_object_storage_size,
        "code_object_storage_offset" = code_object_storage_offset,
        "segment_base" = segment_base,
        "segment_size" = segment_size
    );
    out
}

/// The same numbers from the headers, through g++.
fn c_layout(rows: &[(String, String, usize)]) -> Vec<usize> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut src = String::from(
        "#define AMD_INTERNAL_BUILD\n#include <stddef.h>\n#include <stdio.h>\n#include <hsa/hsa.h>\n\
         #include <hsa/hsa_ext_amd.h>\n#include <hsa/hsa_ven_amd_loader.h>\n#include <hsa/amd_hsa_queue.h>\n\
         #include <hsa/amd_hsa_signal.h>\n#include <hsa/hsa_api_trace.h>\nint main() {\n",
    );
    for (s, f, _) in rows {
        if f.is_empty() {
            src += &format!("  printf(\"%zu\\n\", sizeof({s}));\n");
        } else {
            src += &format!("  printf(\"%zu\\n\", offsetof({s}, {f}));\n");
        }
    }
    src += "}\n";
    let cpp = dir.path().join("layout.cpp");
    let exe = dir.path().join("layout");
    std::fs::write(&cpp, src).expect("write");
    let st = Command::new("g++")
        .args(["-std=c++17", "-I/usr/include/hsa"])
        .arg(&cpp)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("g++ runs (install g++ and libhsa-runtime-dev)");
    assert!(st.success(), "the layout program does not compile against /usr/include/hsa (libhsa-runtime-dev)");
    let out = Command::new(&exe).output().expect("runs");
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().parse().expect("a number")).collect()
}

#[test]
fn tables_and_structs_are_laid_out_as_the_headers_say() {
    let rows = rust_layout();
    let c = c_layout(&rows);
    assert_eq!(c.len(), rows.len());
    let mut wrong = Vec::new();
    for ((s, f, rust), c) in rows.iter().zip(&c) {
        if rust != c {
            wrong.push(format!("{s}.{}: rust {rust}, C {c}", if f.is_empty() { "sizeof" } else { f }));
        }
    }
    assert!(wrong.is_empty(), "layouts differ from the headers:\n{}", wrong.join("\n"));
    // The four tables hold every entry of the headers' tables.
    let entries = rows.iter().filter(|(s, f, _)| s.ends_with("Table") && f.ends_with("_fn")).count();
    assert_eq!(entries, 125 + 48 + 6 + 13);
}

/// `src/ffi/generated.rs` is what `tools/gen_api.py` makes from the
/// installed headers (formatted as the workspace formats it).
#[test]
fn generated_declarations_are_current() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let clang = Command::new("clang++-19").arg("--version").output().is_ok();
    let python = Command::new("python3").arg("--version").output().is_ok();
    if !clang || !python {
        eprintln!("SKIPPED: clang++-19 or python3 is not installed; generated.rs was not regenerated and compared");
        return;
    }
    let out = Command::new("python3").arg(manifest.join("tools/gen_api.py")).output().expect("gen_api.py runs");
    assert!(out.status.success(), "gen_api.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let dir = tempfile::tempdir().expect("tempdir");
    let fresh = dir.path().join("generated.rs");
    std::fs::write(&fresh, &out.stdout).expect("write");
    let config = manifest.join("../../rustfmt.toml");
    let st = Command::new("rustfmt")
        .args(["--edition", "2021", "--config-path"])
        .arg(&config)
        .arg(&fresh)
        .status()
        .expect("rustfmt runs");
    assert!(st.success());
    let fresh = std::fs::read_to_string(&fresh).expect("read");
    let committed = std::fs::read_to_string(manifest.join("src/ffi/generated.rs")).expect("read");
    assert!(fresh == committed, "src/ffi/generated.rs is not what tools/gen_api.py makes: regenerate it");
}
