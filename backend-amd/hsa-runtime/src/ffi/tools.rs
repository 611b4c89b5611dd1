//! Tools named by `HSA_TOOLS_LIB`, loaded as AMD's runtime loads them: the
//! names split at spaces (double quotes group, a backslash escapes the next
//! character), each library opened in turn and its
//! `bool OnLoad(HsaApiTable* table, uint64_t runtime_version,
//! uint64_t failed_tool_count, const char* const* failed_tool_names)`
//! called with the live API table, the root table's major version, and the
//! names that failed so far. A library that does not open, has no `OnLoad`
//! or whose `OnLoad` returns false is closed and counted as failed, with one
//! line on stderr (`HSA_TOOLS_REPORT_LOAD_FAILURE=0` silences the line for
//! libraries that do not open, as in AMD's runtime); the program goes on
//! without it. At the last `hsa_shut_down` each loaded tool's `OnUnload`
//! runs, last loaded first.

use super::table;
use std::ffi::{c_char, c_void, CStr, CString};

type OnLoad = unsafe extern "C" fn(*mut table::HsaApiTable, u64, u64, *const *const c_char) -> bool;
type OnUnload = unsafe extern "C" fn();

/// A loaded tool library.
#[derive(Debug)]
pub struct Tool {
    pub name: String,
    handle: *mut c_void,
}

// SAFETY: a dlopen handle may be used and closed from any thread.
unsafe impl Send for Tool {}

/// The names of `HSA_TOOLS_LIB`, split as AMD's runtime splits them.
pub fn parse_names(list: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut name = String::new();
    let (mut quoted, mut started) = (false, false);
    let mut chars = list.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' if !quoted => {
                if started {
                    names.push(std::mem::take(&mut name));
                }
                started = false;
            }
            '"' => {
                if quoted {
                    names.push(std::mem::take(&mut name));
                    started = false;
                } else {
                    started = true;
                }
                quoted = !quoted;
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    name.push(next);
                    started = true;
                }
            }
            other => {
                name.push(other);
                started = true;
            }
        }
    }
    if started && !name.is_empty() {
        names.push(name);
    }
    names
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Loads the tools `HSA_TOOLS_LIB` names, in order.
pub fn load_from_env() -> Vec<Tool> {
    let Ok(list) = std::env::var("HSA_TOOLS_LIB") else { return Vec::new() };
    let report_missing = std::env::var("HSA_TOOLS_REPORT_LOAD_FAILURE").map_or(true, |v| v != "0");
    let mut failed: Vec<CString> = Vec::new();
    let mut loaded = Vec::new();
    for name in parse_names(&list) {
        let Ok(c_name) = CString::new(name.clone()) else { continue };
        // SAFETY: a NUL-terminated name; dlopen runs the library's constructors.
        let handle = unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW) };
        if handle.is_null() {
            if report_missing {
                eprintln!(
                    "warning: HSA_TOOLS_LIB: tool library \"{name}\" failed to load ({}); the program runs without it",
                    dl_error()
                );
            }
            failed.push(c_name);
            continue;
        }
        // SAFETY: a handle dlopen returned; the symbol's type is OnLoad's
        // as the tool interface defines it.
        let on_load = unsafe { libc::dlsym(handle, c"OnLoad".as_ptr()) };
        if on_load.is_null() {
            eprintln!("warning: HSA_TOOLS_LIB: \"{name}\" has no OnLoad; the program runs without it");
            // SAFETY: closing the handle we opened.
            unsafe { libc::dlclose(handle) };
            failed.push(c_name);
            continue;
        }
        // SAFETY: the tool interface's signature of OnLoad.
        let on_load: OnLoad = unsafe { std::mem::transmute::<*mut c_void, OnLoad>(on_load) };
        let names: Vec<*const c_char> = failed.iter().map(|n| n.as_ptr()).collect();
        let names_ptr = if names.is_empty() { std::ptr::null() } else { names.as_ptr() };
        let version = u64::from(table::TABLE_MAJOR_VERSION);
        // SAFETY: the tool's OnLoad with the live table, as AMD's runtime calls it.
        let ok = unsafe { on_load(table::root(), version, names.len() as u64, names_ptr) };
        if !ok {
            eprintln!("warning: HSA_TOOLS_LIB: the OnLoad of \"{name}\" returned false; the program runs without it");
            // SAFETY: closing the handle we opened.
            unsafe { libc::dlclose(handle) };
            failed.push(c_name);
            continue;
        }
        loaded.push(Tool { name, handle });
    }
    loaded
}

/// Calls each tool's `OnUnload`, last loaded first.
pub fn call_on_unload(tools: &[Tool]) {
    for t in tools.iter().rev() {
        // SAFETY: a handle of a loaded tool.
        let f = unsafe { libc::dlsym(t.handle, c"OnUnload".as_ptr()) };
        if !f.is_null() {
            // SAFETY: the tool interface's signature of OnUnload.
            let f: OnUnload = unsafe { std::mem::transmute::<*mut c_void, OnUnload>(f) };
            // SAFETY: the tool's own function.
            unsafe { f() };
        }
    }
}

/// Closes the tools' libraries.
pub fn close(tools: Vec<Tool>) {
    for t in tools {
        // SAFETY: a handle we opened, closed once.
        unsafe { libc::dlclose(t.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::parse_names;

    #[test]
    fn names_split_like_the_runtime_splits_them() {
        assert_eq!(parse_names("a.so b.so"), ["a.so", "b.so"]);
        assert_eq!(parse_names("  a.so   b.so "), ["a.so", "b.so"]);
        assert_eq!(parse_names("\"my tool.so\" b.so"), ["my tool.so", "b.so"]);
        assert_eq!(parse_names("my\\ tool.so"), ["my tool.so"]);
        assert!(parse_names("").is_empty());
    }
}
