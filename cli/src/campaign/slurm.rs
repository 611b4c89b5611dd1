//! Campaigns on a Slurm cluster: a job array whose task I runs every
//! COUNT-th fault starting at I (`xfpx campaign shard`), each into its own
//! line file, and a merge job (`xfpx campaign merge`) that combines them
//! into the same `results.jsonl` and `results.csv` a local campaign writes.

use super::engine::{self, shard_journal};
use super::{load_definition, results, Definition};
use crate::console::say;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// A word quoted for `sh`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Write `campaign.sbatch`, `merge.sbatch` and `submit.sh` into `dir`.
pub fn write_scripts(dir: &Path, def: &Definition, shards: u32, extra: &[String]) -> Result<i32> {
    if shards == 0 {
        bail!("--shards must be at least 1");
    }
    let shards = shards.min(def.faults.len() as u32);
    let exe = std::env::current_exe().context("cannot find the xfpx executable")?;
    let (exe, d) = (quote(&exe.to_string_lossy()), quote(&dir.to_string_lossy()));
    let logs = dir.join("slurm");
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let extra: String = extra.iter().map(|o| format!("#SBATCH {o}\n")).collect();
    let array = format!(
        "#!/bin/sh\n#SBATCH --job-name=xfpx-campaign\n#SBATCH --array=0-{last}\n\
         #SBATCH --output={logs}/shard-%a.out\n{extra}\
         exec {exe} campaign shard {d} --index \"$SLURM_ARRAY_TASK_ID\" --count {shards}\n",
        last = shards - 1,
        logs = logs.display(),
    );
    let merge = format!(
        "#!/bin/sh\n#SBATCH --job-name=xfpx-campaign-merge\n#SBATCH --output={logs}/merge.out\n{extra}\
         exec {exe} campaign merge {d}\n",
        logs = logs.display(),
    );
    let submit = format!(
        "#!/bin/sh\n# Submit the array, then the merge once every array task succeeded.\nset -e\n\
         job=$(sbatch --parsable {a})\nsbatch --parsable --dependency=afterok:\"${{job%%;*}}\" {m}\n",
        a = quote(&dir.join("campaign.sbatch").to_string_lossy()),
        m = quote(&dir.join("merge.sbatch").to_string_lossy()),
    );
    for (name, text) in [("campaign.sbatch", array), ("merge.sbatch", merge), ("submit.sh", submit)] {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
    }
    say!("xfpx: {} runs in {shards} array tasks: submit with {}", def.faults.len(), dir.join("submit.sh").display());
    Ok(0)
}

/// One array task: the faults whose index modulo `count` is `index`.
pub fn shard(dir: &Path, index: u32, count: u32, jobs: Option<usize>) -> Result<i32> {
    if count == 0 || index >= count {
        bail!("invalid shard {index} of {count}: --index must be below --count");
    }
    let dir = std::path::absolute(dir).with_context(|| format!("bad directory {}", dir.display()))?;
    let def = load_definition(&dir)?;
    let ids: Vec<u32> = (0..def.faults.len() as u32).filter(|i| i % count == index).collect();
    let jobs =
        jobs.or_else(|| std::env::var("SLURM_CPUS_PER_TASK").ok().and_then(|v| v.parse().ok())).unwrap_or(1).max(1);
    std::fs::create_dir_all(dir.join("shards")).with_context(|| format!("cannot create {}/shards", dir.display()))?;
    engine::run_campaign(&dir, &def, &ids, jobs, &[], &shard_journal(&dir, index), false)
}

/// Combine every line file of `dir` into the sorted results.
pub fn merge(dir: &Path) -> Result<i32> {
    let def = load_definition(dir)?;
    let all = results::gather(dir)?;
    results::write_sorted(dir, &all)?;
    engine::summary(&all);
    let missing = def.faults.len() - all.len().min(def.faults.len());
    if missing > 0 {
        say!("xfpx: {missing} of {} runs have no result yet (a shard failed or is still running)", def.faults.len());
        return Ok(crate::exit::EXIT_ERROR);
    }
    Ok(0)
}
