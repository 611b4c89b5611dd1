//! The `xfpx` command line: `run` a program with floating-point exception
//! detection, `dump` how a kernel would be instrumented, print a saved
//! `report`, `replay` a captured AMD launch on the emulator, the bundled
//! `demo`, `setup` of the NVIDIA tool library, fault-injection `campaign`s
//! `region build` (the operational regions of counters) and `compare` of
//! two reports. Errors end in
//! one `error: ...` line on stderr and a non-zero exit
//! code (see [`exit`]).

mod args;
mod campaign;
mod capture_replay;
mod compare;
mod console;
mod demo;
mod dump;
mod events;
mod exit;
mod fault_args;
mod findings;
mod flow_text;
mod html;
mod output;
mod progress;
#[cfg(test)]
mod proptests;
mod region_cmd;
mod replay;
mod report_cmd;
mod report_io;
mod report_name;
mod run;
mod screen_lines;
mod setup;
mod signals;
mod summary;
mod tool_library;
mod vendor;

/// The rewriter makes and frees many small buffers (about a fifth fewer
/// instructions per rewrite than with the system allocator).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use args::{Cli, Command};
use clap::Parser;
use console::say;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors
            // are clap's own message with status 2.
            let code = if e.use_stderr() { exit::EXIT_USAGE } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let result = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Dump(a) => dump::dump(&a),
        Command::Report(a) => report_cmd::report(&a),
        Command::Replay(a) => a.fault.check(a.tool).and_then(|fault| replay::replay(&a, fault)),
        Command::Demo(a) => demo::demo(&a),
        Command::Setup(a) => setup::setup(&a),
        Command::Campaign(a) => campaign::campaign(a),
        Command::Region(args::RegionCommand::Build(a)) => region_cmd::build(&a),
        Command::Compare(a) => compare::compare(&a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            let code = e.downcast_ref::<exit::ExitError>().map_or(exit::EXIT_ERROR, |x| x.code);
            if !console::is_closed_stdout(&e) {
                say!("error: {}", one_line(&e));
            }
            std::process::exit(code);
        }
    }
}

/// An error chain on one line: causes joined by `: `, a cause left out when
/// the message before it already includes its text.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_chain_on_one_line() {
        let inner = std::io::Error::other("disk\nfull");
        let e = anyhow::Error::new(inner).context("cannot write report r.json");
        assert_eq!(one_line(&e), "cannot write report r.json: disk full");
        let dup = anyhow::anyhow!("bad: inner").context("outer: bad: inner");
        assert_eq!(one_line(&dup), "outer: bad: inner");
    }
}
