//! The disassembly cache's helper program (`tool/shim/xfpx_disasm_cache.c`),
//! built here with the system's C compiler as `xfpx setup nvidia` builds it
//! with nvcc's: it must find every answer under the key the cache's Rust
//! side and its wrapper script file it under, and hand every call it does
//! not answer to the script.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use xfpx_nvidia::disasm_cache::{DisasmCache, HELPER_DIR_ENV, HELPER_SCRIPT_ENV, HELPER_TAG_ENV};

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xfpx-helper-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// The helper, compiled with warnings as errors.
fn build_helper(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tool/shim/xfpx_disasm_cache.c");
    let out = dir.join("xfpx-nvdisasm-cache");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let made = Command::new(&cc)
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| {
            panic!("the C compiler `{cc}` (needed to build the helper as the setup does) cannot run: {e}")
        });
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    out
}

/// A fake disassembler that marks each run and prints its options and input.
fn fake_disassembler(dir: &Path) -> (PathBuf, PathBuf) {
    let marks = dir.join("marks");
    let real = dir.join("nvdisasm");
    std::fs::write(&real, format!("#!/bin/sh\necho run >> '{}'\necho \"$1 $2\"; cat \"$3\"\n", marks.display()))
        .expect("write");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (real, marks)
}

fn call(helper: &Path, env: &[(&'static str, String)], args: &[&str], file: &Path) -> Output {
    let mut c = Command::new(helper);
    for k in [HELPER_DIR_ENV, HELPER_TAG_ENV, HELPER_SCRIPT_ENV] {
        c.env_remove(k);
    }
    c.envs(env.iter().map(|(k, v)| (*k, v))).args(args).arg(file).output().expect("runs")
}

#[test]
fn the_helper_answers_what_the_cache_holds_and_hands_the_rest_to_the_script() {
    let dir = temp("answers");
    let helper = build_helper(&dir);
    let (real, marks) = fake_disassembler(&dir);
    let cache = DisasmCache { dir: dir.join("cache"), real };
    let script = cache.write_wrapper().expect("wrapper");
    let env = cache.helper_env(&script).expect("settings");
    let runs = || std::fs::read_to_string(&marks).map_or(0, |t| t.lines().count());
    let tag = cache.tag().expect("tag");
    let code = dir.join("raw.bin");
    // sizes around SHA-256's 64-byte blocks and its 56-byte padding limit
    for (n, len) in [0usize, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 200_003].into_iter().enumerate() {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 31 + n) as u8).collect();
        std::fs::write(&code, &bytes).expect("write");
        let key = DisasmCache::key(&tag, &["-b".to_string(), "SM90".to_string()], &bytes);
        let answer = format!("answer {len}\n");
        cache.store(&key, answer.as_bytes()).expect("store");
        let out = call(&helper, &env, &["-b", "SM90"], &code);
        assert!(out.status.success(), "{len} bytes: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), answer, "{len} bytes: the key the cache filed it under");
    }
    assert_eq!(runs(), 0, "every answer came from the cache");
    // not cached: the script runs the disassembler and files the answer,
    // which the helper gives the next time by itself
    std::fs::write(&code, b"FADD R1").expect("write");
    let first = call(&helper, &env, &["-b", "SM80"], &code);
    assert_eq!(String::from_utf8_lossy(&first.stdout), "-b SM80\nFADD R1");
    assert_eq!(runs(), 1);
    let again = call(&helper, &env, &["-b", "SM80"], &code);
    assert_eq!(String::from_utf8_lossy(&again.stdout), "-b SM80\nFADD R1");
    assert_eq!(runs(), 1, "the second call came from the cache");
    // an empty entry is no answer
    let key = DisasmCache::key(&tag, &["-b".to_string(), "SM70".to_string()], b"FADD R1");
    std::fs::write(cache.dir.join(&key), b"").expect("write");
    let out = call(&helper, &env, &["-b", "SM70"], &code);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "-b SM70\nFADD R1");
    assert_eq!(runs(), 2);
    // a file it cannot read goes to the script (and the disassembler's
    // own failure comes back)
    let out = call(&helper, &env, &["-b", "SM90"], &dir.join("missing.bin"));
    assert!(!out.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_helper_without_its_settings_says_so() {
    let dir = temp("alone");
    let helper = build_helper(&dir);
    let out = call(&helper, &[], &["-b", "SM90"], &dir.join("x.bin"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(HELPER_SCRIPT_ENV), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
