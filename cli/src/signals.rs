//! Catching SIGINT, SIGTERM and SIGHUP while the program under test runs,
//! so `xfpx run` can pass them on and still write the report. All `unsafe`
//! of the CLI lives here.
//!
//! A signal sent to `xfpx` itself (by `kill`, a job scheduler, a timeout)
//! is forwarded to the program. A signal the terminal sends to the whole
//! foreground process group (Ctrl-C) already reaches the program, so it is
//! only noted, not sent a second time.

use std::sync::atomic::{AtomicU32, Ordering};

/// The signals handled.
pub const FORWARDED: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Bit `sig` set: a signal to forward is pending.
static TO_FORWARD: AtomicU32 = AtomicU32::new(0);
/// Bit `sig` set: a signal was received (forwarded or not).
static RECEIVED: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let bit = 1u32 << (sig as u32 & 31);
    RECEIVED.fetch_or(bit, Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    let code = if info.is_null() { libc::SI_USER } else { unsafe { (*info).si_code } };
    if code != libc::SI_KERNEL {
        TO_FORWARD.fetch_or(bit, Ordering::SeqCst);
    }
}

/// Install the handlers. Returns an error text if the system refuses.
pub fn install() -> Result<(), String> {
    for sig in FORWARDED {
        // SAFETY: a zeroed sigaction is a valid starting value; the handler
        // only touches atomics, which is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = on_signal;
            action.sa_sigaction = handler as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(sig, &action, std::ptr::null_mut()) != 0 {
                return Err(format!("cannot install a handler for signal {sig}: {}", std::io::Error::last_os_error()));
            }
        }
    }
    Ok(())
}

/// Signals to forward that arrived since the last call.
pub fn take_to_forward() -> Vec<i32> {
    let bits = TO_FORWARD.swap(0, Ordering::SeqCst);
    (1..32).filter(|s| bits & (1 << s) != 0).collect()
}

/// Every handled signal received so far (forwarded or not).
pub fn received() -> Vec<i32> {
    let bits = RECEIVED.load(Ordering::SeqCst);
    (1..32).filter(|s| bits & (1 << s) != 0).collect()
}

/// Send `sig` to process `pid`.
pub fn send(pid: u32, sig: i32) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| std::io::Error::other("process id out of range"))?;
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Send `sig` to every process of group `pgid` (a campaign run started
/// with its own group, so its program's children go with it).
pub fn send_group(pgid: u32, sig: i32) -> std::io::Result<()> {
    let pgid = libc::pid_t::try_from(pgid).map_err(|_| std::io::Error::other("process group out of range"))?;
    // SAFETY: killpg has no memory-safety preconditions.
    if unsafe { libc::killpg(pgid, sig) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Have the kernel kill `command`'s process when the thread that starts it
/// ends (a campaign killed outright leaves no run behind).
pub fn die_with_parent(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

/// The conventional name of a signal (`SIGSEGV`), or its number.
pub fn name(sig: i32) -> String {
    const NAMES: &[(i32, &str)] = &[
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
    ];
    NAMES.iter().find(|(n, _)| *n == sig).map_or_else(|| format!("signal {sig}"), |(_, s)| (*s).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
        assert_eq!(name(63), "signal 63");
    }
}
