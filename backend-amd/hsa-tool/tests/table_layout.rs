//! The facts the tool relies on (`src/layout.rs`, `src/hsa.rs`) against
//! real `hsa_api_trace.h` headers: a small C++ program compiled against
//! each header folder prints the versions, sizes and offsets it sees, and
//! the layout the tool chooses for those versions must put every entry
//! where the header does.
//!
//! Folders: ROCm 5.2's (`/usr/include/hsa`, Debian's `libhsa-runtime-dev`;
//! required under CI), a recent ROCm's in `third_party/rocm-recent/hsa`
//! (fetched by hand from ROCm's public repositories, never committed;
//! skipped loudly when absent) and any in `XFPX_HSA_HEADERS`
//! (colon-separated), e.g. other releases' headers when a layout is added.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_hsa::hsa;
use xfpx_hsa::layout::{self, Entry, Version};

fn probe_source() -> String {
    let mut s = String::from(
        "#include <hsa_api_trace.h>\n#include <amd_hsa_signal.h>\n#include <cstdio>\n#include <cstddef>\nint main() {\n\
         #define V(n, t, m) printf(n \" %u %zu\\n\", (unsigned)(m), sizeof(t));\n\
         V(\"root\", HsaApiTable, HSA_API_TABLE_MAJOR_VERSION)\n\
         V(\"core\", CoreApiTable, HSA_CORE_API_TABLE_MAJOR_VERSION)\n\
         V(\"amd_ext\", AmdExtTable, HSA_AMD_EXT_API_TABLE_MAJOR_VERSION)\n\
         #define O(t, f) printf(#f \" %zu\\n\", offsetof(t, f));\n\
         #define C(n) printf(#n \" %lld\\n\", (long long)(n));\n\
         O(HsaApiTable, core_) O(HsaApiTable, amd_ext_)\n\
         O(hsa_kernel_dispatch_packet_t, kernel_object) O(hsa_kernel_dispatch_packet_t, completion_signal)\n\
         O(amd_signal_t, start_ts) O(amd_signal_t, end_ts)\n\
         printf(\"packet %zu\\n\", sizeof(hsa_kernel_dispatch_packet_t));\n",
    );
    for e in Entry::ALL {
        s.push_str(&format!("O({}, {})\n", e.table().c_name(), e.field()));
    }
    for (name, _) in constants() {
        s.push_str(&format!("C({name})\n"));
    }
    s.push_str("return 0; }\n");
    s
}

/// The constants of `src/hsa.rs` by their names in the headers.
fn constants() -> Vec<(&'static str, i64)> {
    vec![
        ("HSA_STATUS_SUCCESS", hsa::STATUS_SUCCESS.into()),
        ("HSA_STATUS_INFO_BREAK", hsa::STATUS_INFO_BREAK.into()),
        ("HSA_STATUS_ERROR", hsa::STATUS_ERROR.into()),
        ("HSA_DEVICE_TYPE_CPU", hsa::DEVICE_TYPE_CPU.into()),
        ("HSA_DEVICE_TYPE_GPU", hsa::DEVICE_TYPE_GPU.into()),
        ("HSA_AGENT_INFO_NAME", hsa::AGENT_INFO_NAME.into()),
        ("HSA_AGENT_INFO_VENDOR_NAME", hsa::AGENT_INFO_VENDOR_NAME.into()),
        ("HSA_AGENT_INFO_DEVICE", hsa::AGENT_INFO_DEVICE.into()),
        ("HSA_AMD_AGENT_INFO_PRODUCT_NAME", hsa::AMD_AGENT_INFO_PRODUCT_NAME.into()),
        ("HSA_REGION_INFO_SEGMENT", hsa::REGION_INFO_SEGMENT.into()),
        ("HSA_REGION_INFO_GLOBAL_FLAGS", hsa::REGION_INFO_GLOBAL_FLAGS.into()),
        ("HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED", hsa::REGION_INFO_RUNTIME_ALLOC_ALLOWED.into()),
        ("HSA_REGION_SEGMENT_GLOBAL", hsa::REGION_SEGMENT_GLOBAL.into()),
        ("HSA_REGION_GLOBAL_FLAG_FINE_GRAINED", hsa::REGION_GLOBAL_FLAG_FINE_GRAINED.into()),
        ("HSA_EXECUTABLE_INFO_PROFILE", hsa::EXECUTABLE_INFO_PROFILE.into()),
        ("HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE", hsa::EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE.into()),
        ("HSA_EXECUTABLE_SYMBOL_INFO_TYPE", hsa::SYMBOL_INFO_TYPE.into()),
        ("HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH", hsa::SYMBOL_INFO_NAME_LENGTH.into()),
        ("HSA_EXECUTABLE_SYMBOL_INFO_NAME", hsa::SYMBOL_INFO_NAME.into()),
        ("HSA_EXECUTABLE_SYMBOL_INFO_AGENT", hsa::SYMBOL_INFO_AGENT.into()),
        ("HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT", hsa::SYMBOL_INFO_KERNEL_OBJECT.into()),
        ("HSA_SYMBOL_KIND_KERNEL", hsa::SYMBOL_KIND_KERNEL.into()),
        ("HSA_SIGNAL_CONDITION_LT", hsa::SIGNAL_CONDITION_LT.into()),
        ("HSA_WAIT_STATE_BLOCKED", hsa::WAIT_STATE_BLOCKED.into()),
        ("HSA_PACKET_TYPE_KERNEL_DISPATCH", hsa::PACKET_TYPE_KERNEL_DISPATCH.into()),
        ("HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE", hsa::PACKET_HEADER_SCRELEASE_FENCE_SCOPE.into()),
        ("HSA_FENCE_SCOPE_SYSTEM", hsa::FENCE_SCOPE_SYSTEM.into()),
    ]
}

fn compiler() -> Option<String> {
    let candidates = std::env::var("CXX").ok().into_iter().chain(["clang++-19", "clang++", "g++"].map(String::from));
    candidates.into_iter().find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// What the header folder `dir` says: name -> value(s).
fn probe(dir: &Path, cxx: &str) -> HashMap<String, Vec<u64>> {
    let work = tempfile::tempdir().expect("temporary folder");
    let src = work.path().join("probe.cpp");
    std::fs::write(&src, probe_source()).expect("write the probe");
    let exe = work.path().join("probe");
    let out = Command::new(cxx)
        .arg("-DAMD_INTERNAL_BUILD")
        .arg("-I")
        .arg(dir)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the compiler");
    assert!(
        out.status.success(),
        "{cxx} failed on the headers in {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().expect("run the probe");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut words = l.split_whitespace();
            let name = words.next().expect("name").to_string();
            (name, words.map(|w| w.parse::<i64>().expect("number") as u64).collect())
        })
        .collect()
}

fn check(dir: &Path, cxx: &str) {
    let seen = probe(dir, cxx);
    let version = |t: &str| {
        let v = &seen[t];
        Version { major: v[0] as u32, minor: v[1] as u32, step: 0 }
    };
    let chosen = layout::choose(version("root"), version("core"), version("amd_ext"))
        .unwrap_or_else(|e| panic!("headers in {}: {e}", dir.display()));
    let mut wrong = Vec::new();
    for e in Entry::ALL {
        let at = seen[e.field()][0] as usize;
        if at != chosen.offset(e) {
            wrong.push(format!(
                "{}::{} is at {at}, the layout says {}",
                e.table().c_name(),
                e.field(),
                chosen.offset(e)
            ));
        }
    }
    for (field, ours) in [("core_", layout::ROOT_CORE), ("amd_ext_", layout::ROOT_AMD_EXT)] {
        if seen[field][0] as usize != ours {
            wrong.push(format!("HsaApiTable::{field} is at {}, not {ours}", seen[field][0]));
        }
    }
    for (name, ours) in [
        ("kernel_object", hsa::DISPATCH_KERNEL_OBJECT),
        ("completion_signal", hsa::DISPATCH_COMPLETION_SIGNAL),
        ("packet", hsa::PACKET_BYTES),
        ("start_ts", hsa::SIGNAL_START_TS),
        ("end_ts", hsa::SIGNAL_END_TS),
    ] {
        if seen[name][0] as usize != ours {
            wrong.push(format!("dispatch packet {name}: {} in the header, {ours} in the tool", seen[name][0]));
        }
    }
    for (name, ours) in constants() {
        if seen[name][0] as i64 != ours {
            wrong.push(format!("{name} is {} in the header, {ours} in the tool", seen[name][0]));
        }
    }
    assert!(wrong.is_empty(), "headers in {} ({}):\n{}", dir.display(), chosen.releases, wrong.join("\n"));
    eprintln!("headers in {}: layout of {} confirmed", dir.display(), chosen.releases);
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn facts_match_rocm_headers() {
    let ci = std::env::var_os("CI").is_some();
    let Some(cxx) = compiler() else {
        assert!(!ci, "no C++ compiler (CXX, clang++-19, clang++, g++) to read the HSA headers with");
        eprintln!("SKIPPED: no C++ compiler found: the table layout is not checked against the headers");
        return;
    };
    let debian = PathBuf::from("/usr/include/hsa");
    if debian.join("hsa_api_trace.h").is_file() {
        check(&debian, &cxx);
    } else {
        assert!(!ci, "{} has no hsa_api_trace.h: install libhsa-runtime-dev", debian.display());
        eprintln!("SKIPPED: ROCm 5.2's headers are not installed (apt-get install libhsa-runtime-dev)");
    }
    let recent = workspace().join("third_party/rocm-recent/hsa");
    if recent.join("hsa_api_trace.h").is_file() {
        check(&recent, &cxx);
    } else {
        eprintln!(
            "SKIPPED: no recent ROCm headers in {} (copy runtime/hsa-runtime/inc of ROCm's runtime there to check them)",
            recent.display()
        );
    }
    for dir in std::env::var("XFPX_HSA_HEADERS").unwrap_or_default().split(':').filter(|d| !d.is_empty()) {
        check(Path::new(dir), &cxx);
    }
}
