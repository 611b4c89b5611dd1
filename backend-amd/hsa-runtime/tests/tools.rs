//! Tools load through `HSA_TOOLS_LIB` as AMD's runtime loads them: a tool
//! built against the real `hsa_api_trace.h` finds the table laid out as the
//! headers say, replaces `hsa_queue_create` (every program call goes through
//! the table) and counts each packet through an intercept queue; two such
//! tools chain; `OnUnload` runs last-loaded first at `hsa_shut_down`; a
//! library that does not load or whose `OnLoad` returns false costs one line
//! and the program runs on.

mod common;

use common::{build_tool, run, text};

fn lines_of(stderr: &str, prefix: &str) -> Vec<String> {
    stderr.lines().filter(|l| l.starts_with(prefix)).map(str::to_string).collect()
}

#[test]
fn a_tool_counts_every_dispatch_of_every_program() {
    let a = build_tool("a", &[]);
    // (program, queues, dispatches, barrier packets)
    for (p, q, d, b) in
        [("vector_add", 1, 1, 0), ("reduce", 1, 2, 1), ("multi", 2, 4, 1), ("fpe", 1, 3, 0), ("unrewritable", 1, 1, 0)]
    {
        let out = run(p, &[("HSA_TOOLS_LIB", a.to_str().expect("path"))]);
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{p}: {stderr}");
        assert!(text(&out.stdout).contains("equal the host's"), "{p}");
        assert_eq!(
            lines_of(&stderr, "tool a:"),
            [
                "tool a: OnLoad runtime_version=1 failed=0".to_string(),
                format!("tool a: OnUnload queues={q} dispatches={d} barriers={b}"),
            ],
            "{p}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 2, "{p}: {stderr}");
    }
}

#[test]
fn two_tools_chain_and_unload_in_reverse_order() {
    let (a, b) = (build_tool("a", &[]), build_tool("b", &[]));
    let list = format!("{} {}", a.display(), b.display());
    let out = run("multi", &[("HSA_TOOLS_LIB", &list)]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            "tool a: OnLoad runtime_version=1 failed=0",
            "tool b: OnLoad runtime_version=1 failed=0",
            "tool b: OnUnload queues=2 dispatches=4 barriers=1",
            "tool a: OnUnload queues=2 dispatches=4 barriers=1",
        ]
    );
}

#[test]
fn missing_and_refusing_tools_cost_one_line_each() {
    let (refuse, b) = (build_tool("r", &["-DREFUSE"]), build_tool("b", &[]));
    let missing = "/nonexistent/libmissing-tool.so";
    let list = format!("{missing} {} {}", refuse.display(), b.display());
    let out = run("reduce", &[("HSA_TOOLS_LIB", &list)]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(text(&out.stdout).contains("equal the host's"));
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 5, "{stderr}");
    assert!(lines[0].starts_with(&format!("warning: HSA_TOOLS_LIB: tool library \"{missing}\" failed to load")));
    assert!(lines[0].ends_with("the program runs without it"), "{}", lines[0]);
    assert_eq!(lines[1], format!("tool r: OnLoad runtime_version=1 failed=1 [{missing}]"));
    assert_eq!(
        lines[2],
        format!(
            "warning: HSA_TOOLS_LIB: the OnLoad of \"{}\" returned false; the program runs without it",
            refuse.display()
        )
    );
    assert_eq!(lines[3], format!("tool b: OnLoad runtime_version=1 failed=2 [{missing}] [{}]", refuse.display()));
    assert_eq!(lines[4], "tool b: OnUnload queues=1 dispatches=2 barriers=1");
}

#[test]
fn a_missing_tool_alone_leaves_the_program_as_it_is() {
    let out = run("vector_add", &[("HSA_TOOLS_LIB", "libno-such-tool.so")]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("\"libno-such-tool.so\" failed to load"), "{stderr}");
    let quiet = run("vector_add", &[("HSA_TOOLS_LIB", "libno-such-tool.so"), ("HSA_TOOLS_REPORT_LOAD_FAILURE", "0")]);
    assert!(quiet.status.success());
    assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
}
