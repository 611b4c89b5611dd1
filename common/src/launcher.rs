//! Who this process is in a parallel job: its rank and the job's size as
//! the launcher sets them in the environment (Open MPI, MPICH and other
//! PMI launchers, PMIx, Slurm), its host name, process id and command
//! line. The one place that reads these variables.

use crate::report::ProcessInfo;

/// A launcher's variables: its name, the rank variable, the size variable.
/// The first whose rank is set wins: MPI's own variables come before
/// Slurm's, which a job step started inside an allocation also inherits.
const LAUNCHERS: [(&str, &str, Option<&str>); 4] = [
    ("open-mpi", "OMPI_COMM_WORLD_RANK", Some("OMPI_COMM_WORLD_SIZE")),
    ("pmi", "PMI_RANK", Some("PMI_SIZE")),
    ("pmix", "PMIX_RANK", None),
    ("slurm", "SLURM_PROCID", Some("SLURM_NTASKS")),
];

/// The variables read for a rank, for messages.
pub const RANK_VARIABLES: &str = "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID";

/// A rank as a launcher set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LauncherRank {
    pub rank: u32,
    /// Number of processes in the job, when the launcher says.
    pub size: Option<u32>,
    /// Which launcher's variables gave it (`open-mpi`, `pmi`, `pmix`, `slurm`).
    pub launcher: &'static str,
}

fn number(value: Option<String>) -> Option<u32> {
    value.and_then(|v| v.trim().parse().ok())
}

/// The rank that `lookup` (an environment) gives; `None` when no launcher
/// set a rank (a plain run). A variable that is not a whole number counts
/// as unset.
pub fn rank_from(lookup: impl Fn(&str) -> Option<String>) -> Option<LauncherRank> {
    LAUNCHERS.iter().find_map(|&(launcher, rank_var, size_var)| {
        let rank = number(lookup(rank_var))?;
        let size = size_var.and_then(|v| number(lookup(v)));
        Some(LauncherRank { rank, size, launcher })
    })
}

/// The rank this process's environment gives.
pub fn rank_from_env() -> Option<LauncherRank> {
    rank_from(|name| std::env::var(name).ok())
}

/// This machine's host name (`unknown` when it cannot be read).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "unknown".into())
}

/// This process as a report names it.
pub fn this_process() -> ProcessInfo {
    let rank = rank_from_env();
    ProcessInfo {
        pid: std::process::id(),
        host: host_name(),
        rank: rank.as_ref().map(|r| r.rank),
        size: rank.as_ref().and_then(|r| r.size),
        launcher: rank.map(|r| r.launcher.to_string()),
    }
}

/// This process's command line (from `/proc/self/cmdline`; empty where
/// it cannot be read).
pub fn command_line() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|c| *c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
        })
        .unwrap_or_default()
}

/// Ranks in short form: sorted, runs as ranges (`0-3,5,7-8`).
pub fn ranks_text(ranks: &[u32]) -> String {
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn each_launcher_is_read() {
        let r = rank_from(env(&[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")]));
        assert_eq!(r, Some(LauncherRank { rank: 3, size: Some(4), launcher: "open-mpi" }));
        let r = rank_from(env(&[("PMI_RANK", "7"), ("PMI_SIZE", "16")]));
        assert_eq!(r, Some(LauncherRank { rank: 7, size: Some(16), launcher: "pmi" }));
        let r = rank_from(env(&[("PMIX_RANK", "2")]));
        assert_eq!(r, Some(LauncherRank { rank: 2, size: None, launcher: "pmix" }));
        let r = rank_from(env(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "8")]));
        assert_eq!(r, Some(LauncherRank { rank: 0, size: Some(8), launcher: "slurm" }));
    }

    #[test]
    fn mpi_wins_over_an_inherited_slurm_rank() {
        // mpirun inside a Slurm allocation: every rank inherits SLURM_PROCID=0.
        let r = rank_from(env(&[("SLURM_PROCID", "0"), ("OMPI_COMM_WORLD_RANK", "5"), ("PMIX_RANK", "5")]));
        assert_eq!(r.map(|r| (r.rank, r.launcher)), Some((5, "open-mpi")));
    }

    #[test]
    fn no_launcher_or_garbage_gives_no_rank() {
        assert_eq!(rank_from(env(&[])), None);
        assert_eq!(rank_from(env(&[("OMPI_COMM_WORLD_RANK", ""), ("PMI_RANK", "x1"), ("SLURM_PROCID", "-1")])), None);
        // A bad size leaves the rank.
        let r = rank_from(env(&[("PMI_RANK", " 4 "), ("PMI_SIZE", "many")]));
        assert_eq!(r, Some(LauncherRank { rank: 4, size: None, launcher: "pmi" }));
        // A bad rank of one launcher falls through to the next.
        let r = rank_from(env(&[("OMPI_COMM_WORLD_RANK", "?"), ("SLURM_PROCID", "6")]));
        assert_eq!(r.map(|r| r.launcher), Some("slurm"));
    }

    #[test]
    fn ranks_in_short_form() {
        assert_eq!(ranks_text(&[]), "");
        assert_eq!(ranks_text(&[2]), "2");
        assert_eq!(ranks_text(&[3, 1, 0, 2]), "0-3");
        assert_eq!(ranks_text(&[0, 1, 2, 3, 5, 7, 8, 8]), "0-3,5,7-8");
        assert_eq!(ranks_text(&[u32::MAX, u32::MAX - 1]), format!("{}-{}", u32::MAX - 1, u32::MAX));
    }

    #[test]
    fn this_process_has_a_pid_and_host() {
        let p = this_process();
        assert_eq!(p.pid, std::process::id());
        assert!(!p.host.is_empty());
    }
}
