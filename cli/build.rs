//! Build script of `xfpx`: carries the Rust core of the NVBit tool (the
//! static library of crate `xfpx-nvbit`) inside release binaries, so that
//! `xfpx setup nvidia` can link the tool library on a machine with nvcc
//! but no Rust toolchain; and the AMD libraries `xfpx run --vendor amd`
//! loads (the HSA tool library of `xfpx-hsa-tool`, the emulated HSA
//! runtime of `xfpx-hsa-runtime`), which `xfpx setup amd` installs.
//!
//! They are built by one nested `cargo build --release` with its own
//! target directory under `OUT_DIR` (no lock shared with the outer build),
//! the same cargo, rustc and target, and are stored zstd-compressed as
//! `OUT_DIR/tool-core.a.zst`, `OUT_DIR/hsa-tool.so.zst` and
//! `OUT_DIR/hsa-runtime.so.zst`. They are built for the release profile
//! (`cargo build --release`, `cargo install`); debug builds get empty
//! files and stay fast. `XFPX_EMBED_TOOL_CORE=1` builds them for any
//! profile, `XFPX_EMBED_TOOL_CORE=0` never.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable that forces the choice.
const EMBED_ENV: &str = "XFPX_EMBED_TOOL_CORE";
/// What the workspace's crates the core is built from live in (relative to
/// the workspace root): a change there rebuilds the core.
const CORE_INPUTS: &[&str] = &["Cargo.toml", "Cargo.lock", "common", "backend-nvidia", "backend-amd", "asm-snippets"];
/// What is carried: (the built file, the file under `OUT_DIR`).
const CARRIED: [(&str, &str); 3] = [
    ("libxfpx_nvbit.a", "tool-core.a.zst"),
    ("libxfpx_hsa.so", "hsa-tool.so.zst"),
    ("libhsa_runtime64.so", "hsa-runtime.so.zst"),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed={EMBED_ENV}");
    let out_dir = PathBuf::from(env("OUT_DIR"));
    let embed = match std::env::var(EMBED_ENV).as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        Ok("") | Err(_) => env("PROFILE") == "release",
        Ok(other) => fail(&format!("{EMBED_ENV} must be 0 or 1, not `{other}`")),
    };
    if !embed {
        for (_, carried) in CARRIED {
            write(&out_dir.join(carried), &[]);
        }
        return;
    }
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let root = manifest_dir.parent().unwrap_or_else(|| fail("the crate has no parent folder")).to_path_buf();
    for input in CORE_INPUTS {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    let built = build_carried(&root, &out_dir.join("tool-core"));
    for (file, carried) in CARRIED {
        let lib = built.join(file);
        let bytes = std::fs::read(&lib).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", lib.display())));
        let packed = zstd::encode_all(&bytes[..], 9).unwrap_or_else(|e| fail(&format!("cannot compress {file}: {e}")));
        write(&out_dir.join(carried), &packed);
    }
}

/// Run the nested cargo; returns the folder of what it built.
fn build_carried(root: &Path, target_dir: &Path) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target = env("TARGET");
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--lib", "-p", "xfpx-nvbit", "-p", "xfpx-hsa-tool", "-p", "xfpx-hsa-runtime"]);
    cmd.args(["--target", &target]);
    cmd.arg("--manifest-path").arg(root.join("Cargo.toml"));
    cmd.arg("--target-dir").arg(target_dir);
    // An offline outer build stays offline (the core's dependencies are a
    // subset of xfpx's, already fetched).
    if std::env::var("CARGO_NET_OFFLINE").is_ok_and(|v| v == "true" || v == "1") {
        cmd.arg("--offline");
    }
    // Settings the outer cargo gave this script that are not meant for the
    // nested one: its target directory and the build-script variables that
    // cargo would otherwise read as configuration.
    for var in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "CARGO_BUILD_TARGET", EMBED_ENV] {
        cmd.env_remove(var);
    }
    let status = cmd.status().unwrap_or_else(|e| fail(&format!("cannot run cargo: {e}")));
    if !status.success() {
        fail(&format!(
            "the nested `cargo build --release` of the libraries release builds carry (the NVBit tool's core for `xfpx setup nvidia`, the AMD libraries for `xfpx setup amd`) failed ({status}); {EMBED_ENV}=0 builds xfpx without them"
        ));
    }
    let dir = target_dir.join(&target).join("release");
    for (file, _) in CARRIED {
        if !dir.join(file).is_file() {
            fail(&format!("the nested build did not produce {}", dir.join(file).display()));
        }
    }
    dir
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| fail(&format!("{name} is not set (not run by cargo?)")))
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", path.display())));
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}
