//! Exit codes of `xfpx` and the error type that carries a specific one.
//!
//! | code | meaning |
//! |---|---|
//! | the program's | `xfpx run`: the program's own exit status |
//! | 128 + N | `xfpx run`: the program was killed by signal N |
//! | 1 | an error of `xfpx` itself (bad input file, no GPU, missing tool library, ...) |
//! | 2 | bad command-line usage |
//! | 3 | `--fail-on KINDS` (`run`, `replay`, `report`): a finding of those kinds was recorded |
//! | 3 | `compare`: the two reports (or their output buffers) differ |
//! | 4 | `--fail-on KINDS`: nothing was checked (the instrumentation never attached, or no launch ran instrumented code) |
//! | 126 | the program could not be executed |
//! | 127 | the program was not found |

use std::fmt;

/// An error of `xfpx` itself.
pub const EXIT_ERROR: i32 = 1;
/// Bad command-line usage.
pub const EXIT_USAGE: i32 = 2;
/// `--fail-on` matched a finding.
pub const EXIT_FINDINGS: i32 = 3;
/// `--fail-on` on a run that checked nothing.
pub const EXIT_NOTHING_CHECKED: i32 = 4;
/// The program could not be executed.
pub const EXIT_NOT_EXECUTABLE: i32 = 126;
/// The program was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// An error that ends `xfpx` with a specific exit code.
#[derive(Debug)]
pub struct ExitError {
    pub code: i32,
    pub message: String,
}

impl ExitError {
    pub fn new(code: i32, message: impl Into<String>) -> ExitError {
        ExitError { code, message: message.into() }
    }
}

impl fmt::Display for ExitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExitError {}
