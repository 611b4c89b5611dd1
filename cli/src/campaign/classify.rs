//! Classifying a faulty run against the golden run: DUE (hang, signal,
//! GPU runtime error text, another exit status), SDC (stdout or a named
//! output differs), not activated (the fault never corrupted anything and
//! nothing differs), or Masked.

use super::exec::Finished;
use crate::signals;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A run's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Outcome {
    Masked,
    #[serde(rename = "SDC")]
    Sdc,
    #[serde(rename = "DUE")]
    Due,
    #[serde(rename = "not-activated")]
    NotActivated,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [Outcome::Masked, Outcome::Sdc, Outcome::Due, Outcome::NotActivated];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Masked => "Masked",
            Outcome::Sdc => "SDC",
            Outcome::Due => "DUE",
            Outcome::NotActivated => "not-activated",
        }
    }
}

/// Texts by which CUDA and HIP runtimes report an error on stdout or stderr.
const GPU_ERRORS: &[&str] = &[
    "CUDA error",
    "cudaError",
    "CUDA_ERROR_",
    "an illegal memory access was encountered",
    "unspecified launch failure",
    "illegal instruction was encountered",
    "HIP error",
    "hipError",
    "Memory access fault by GPU",
];

/// What a run produced that the golden run is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub finished: Finished,
    /// The named outputs by name; `None` where the run left none.
    pub outputs: BTreeMap<String, Option<Vec<u8>>>,
}

/// Compare `a` and `b` bit for bit, or, with a relative tolerance, as
/// texts whose numbers may differ by that much (other words must match).
pub fn same(a: &[u8], b: &[u8], tolerance: Option<f64>) -> bool {
    if a == b {
        return true;
    }
    let (Some(tol), Ok(a), Ok(b)) = (tolerance, std::str::from_utf8(a), std::str::from_utf8(b)) else {
        return false;
    };
    let words = |s: &'static str, t: &str| -> Vec<String> {
        t.split(|c: char| c.is_whitespace() || s.contains(c)).filter(|w| !w.is_empty()).map(String::from).collect()
    };
    let (wa, wb) = (words(",;[](){}", a), words(",;[](){}", b));
    wa.len() == wb.len()
        && wa.iter().zip(&wb).all(|(x, y)| {
            x == y
                || match (x.parse::<f64>(), y.parse::<f64>()) {
                    (Ok(p), Ok(q)) => (p - q).abs() <= tol * p.abs().max(q.abs()) || (p.is_nan() && q.is_nan()),
                    _ => false,
                }
        })
}

/// The class of `run` and why, against `golden`.
pub fn classify(
    golden: &Observed,
    run: &Observed,
    activations: Option<u64>,
    tolerance: Option<f64>,
) -> (Outcome, String) {
    let f = &run.finished;
    if f.timed_out {
        return (Outcome::Due, "hang (timed out)".into());
    }
    if let Some(sig) = f.signal {
        return (Outcome::Due, format!("killed by {}", signals::name(sig)));
    }
    let text = |f: &Finished| [String::from_utf8_lossy(&f.stdout), String::from_utf8_lossy(&f.stderr)].concat();
    let (now, before) = (text(f), text(&golden.finished));
    if let Some(e) = GPU_ERRORS.iter().find(|e| now.contains(**e) && !before.contains(**e)) {
        return (Outcome::Due, format!("GPU runtime error ({e})"));
    }
    if f.code != golden.finished.code {
        return (Outcome::Due, format!("exit status {}", f.code.map_or("?".into(), |c| c.to_string())));
    }
    if !same(&f.stdout, &golden.finished.stdout, tolerance) {
        return (Outcome::Sdc, "stdout differs".into());
    }
    for (name, want) in &golden.outputs {
        match (want, run.outputs.get(name).and_then(Option::as_ref)) {
            (Some(w), Some(got)) if same(got, w, tolerance) => {}
            (None, None) => {}
            (_, None) => return (Outcome::Sdc, format!("{name} missing")),
            _ => return (Outcome::Sdc, format!("{name} differs")),
        }
    }
    if activations == Some(0) {
        return (Outcome::NotActivated, "the fault never fired".into());
    }
    (Outcome::Masked, String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(code: Option<i32>, stdout: &str, out: Option<&str>) -> Observed {
        Observed {
            finished: Finished {
                code,
                signal: None,
                timed_out: false,
                stdout: stdout.into(),
                stderr: Vec::new(),
                seconds: 0.0,
            },
            outputs: [("out.txt".to_string(), out.map(|s| s.as_bytes().to_vec()))].into(),
        }
    }

    #[test]
    fn tolerance_applies_to_numbers_only() {
        assert!(same(b"1.0 2.0", b"1.0 2.0", None));
        assert!(!same(b"1.0 2.0", b"1.0 2.0000001", None));
        assert!(same(b"1.0, 2.0", b"1.0, 2.0000001", Some(1e-6)));
        assert!(!same(b"1.0 2.0", b"1.0 2.1", Some(1e-6)));
        assert!(!same(b"ok 2.0", b"KO 2.0", Some(1.0)));
        assert!(!same(b"1 2", b"1 2 3", Some(1.0)));
        assert!(same(b"nan", b"NaN", Some(0.0)));
    }

    #[test]
    fn classes_in_order_of_precedence() {
        let golden = obs(Some(0), "sum 3\n", Some("1 2 3"));
        let c = |run: &Observed, act| classify(&golden, run, act, None).0;
        assert_eq!(c(&obs(Some(0), "sum 3\n", Some("1 2 3")), Some(4)), Outcome::Masked);
        assert_eq!(c(&obs(Some(0), "sum 3\n", Some("1 2 3")), None), Outcome::Masked);
        assert_eq!(c(&obs(Some(0), "sum 3\n", Some("1 2 3")), Some(0)), Outcome::NotActivated);
        assert_eq!(c(&obs(Some(0), "sum 4\n", Some("1 2 3")), Some(1)), Outcome::Sdc);
        assert_eq!(c(&obs(Some(0), "sum 3\n", Some("1 2 4")), Some(1)), Outcome::Sdc);
        assert_eq!(c(&obs(Some(0), "sum 3\n", None), Some(1)), Outcome::Sdc);
        assert_eq!(c(&obs(Some(1), "sum 3\n", Some("1 2 3")), Some(1)), Outcome::Due);
        let mut gpu = obs(Some(0), "sum 3\n", Some("1 2 3"));
        gpu.finished.stderr = b"CUDA error: an illegal memory access was encountered".to_vec();
        assert_eq!(classify(&golden, &gpu, Some(1), None), (Outcome::Due, "GPU runtime error (CUDA error)".into()));
        let mut sig = obs(None, "", None);
        sig.finished.signal = Some(libc::SIGSEGV);
        assert_eq!(classify(&golden, &sig, Some(1), None), (Outcome::Due, "killed by SIGSEGV".into()));
        let mut hang = obs(None, "", None);
        hang.finished.timed_out = true;
        hang.finished.signal = Some(libc::SIGKILL);
        assert_eq!(classify(&golden, &hang, None, None).1, "hang (timed out)");
    }
}
