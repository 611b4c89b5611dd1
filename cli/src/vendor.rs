//! Which GPU vendor a command targets: the `--vendor` choice resolved
//! against the drivers present on this machine, and each vendor's backend
//! (the seam of [`xfpx_common::backend`]) that the commands drive.

use crate::args::{DumpVendor, VendorChoice};
use anyhow::{bail, Result};
use std::path::Path;
use xfpx_common::backend::{Backend, EmulatedBackend, LiveBackend};

static NVIDIA: xfpx_nvidia::Nvidia = xfpx_nvidia::Nvidia;
static AMD: xfpx_amd::Amd = xfpx_amd::Amd;
static EMULATED_HSA: xfpx_amd::live::EmulatedHsa = xfpx_amd::live::EmulatedHsa;

/// The backend that reads a vendor's saved images (`xfpx dump`).
pub fn backend_of(vendor: DumpVendor) -> &'static dyn Backend {
    match vendor {
        DumpVendor::Nvidia => &NVIDIA,
        DumpVendor::Amd => &AMD,
    }
}

/// The backend with an emulator (`xfpx replay`, `xfpx demo`).
pub fn emulator() -> &'static dyn EmulatedBackend {
    &AMD
}

/// Files whose presence shows a loaded NVIDIA kernel driver.
pub const NVIDIA_DRIVER_PATHS: &[&str] = &["/proc/driver/nvidia/version", "/dev/nvidiactl"];
/// Files whose presence shows the AMD GPU compute driver (ROCm's KFD).
pub const AMD_DRIVER_PATHS: &[&str] = &["/dev/kfd"];

/// A backend that can run a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Nvidia,
    Amd,
    /// AMD, on xfpx's emulated HSA runtime (`--emulate`).
    AmdEmulated,
}

impl Vendor {
    /// The vendor's backend.
    pub fn backend(self) -> &'static dyn Backend {
        match self {
            Vendor::Nvidia => &NVIDIA,
            Vendor::Amd | Vendor::AmdEmulated => &AMD,
        }
    }

    /// The vendor name written into reports.
    pub fn name(self) -> &'static str {
        match self {
            Vendor::AmdEmulated => "amd-emulated",
            _ => self.backend().name(),
        }
    }

    /// How programs run instrumented on this vendor's GPUs.
    pub fn live(self) -> Result<&'static dyn LiveBackend> {
        if self == Vendor::AmdEmulated {
            return Ok(&EMULATED_HSA);
        }
        match self.backend().live() {
            Some(live) => Ok(live),
            None => bail!("live runs on {} GPUs are not part of this release", self.name()),
        }
    }
}

/// What drivers this machine has, as seen through the file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drivers {
    pub nvidia: bool,
    pub amd: bool,
}

impl Drivers {
    /// Look for the driver files under `root` (`/` on a real system).
    pub fn probe(root: &Path) -> Drivers {
        let any = |paths: &[&str]| paths.iter().any(|p| root.join(p.trim_start_matches('/')).exists());
        Drivers { nvidia: any(NVIDIA_DRIVER_PATHS), amd: any(AMD_DRIVER_PATHS) }
    }
}

/// Resolve the user's choice (`emulate`: AMD on the emulated runtime,
/// which needs no driver). `require_driver` is false only under the test
/// hook that loads no instrumentation library.
pub fn resolve(choice: VendorChoice, drivers: Drivers, require_driver: bool, emulate: bool) -> Result<Vendor> {
    match choice {
        VendorChoice::Nvidia if emulate => {
            bail!("--emulate runs AMD programs on xfpx's emulated HSA runtime: use --vendor amd")
        }
        VendorChoice::Amd | VendorChoice::Auto if emulate => Ok(Vendor::AmdEmulated),
        VendorChoice::Nvidia => {
            if require_driver && !drivers.nvidia {
                bail!(
                    "no NVIDIA driver found (looked for {}); is this a machine with an NVIDIA GPU?",
                    NVIDIA_DRIVER_PATHS.join(", ")
                );
            }
            Ok(Vendor::Nvidia)
        }
        VendorChoice::Amd if require_driver && !drivers.amd => bail!(
            "no AMD GPU found ({} is missing); --emulate runs the program on xfpx's emulated HSA runtime",
            AMD_DRIVER_PATHS.join(", ")
        ),
        VendorChoice::Amd => Ok(Vendor::Amd),
        VendorChoice::Auto if drivers.nvidia => Ok(Vendor::Nvidia),
        VendorChoice::Auto if drivers.amd => Ok(Vendor::Amd),
        VendorChoice::Auto => bail!(
            "no supported GPU found: no NVIDIA driver ({}) and no AMD GPU ({}); use --vendor to choose one",
            NVIDIA_DRIVER_PATHS.join(", "),
            AMD_DRIVER_PATHS.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_root(files: &[&str]) -> tempdir::Dir {
        let d = tempdir::Dir::new();
        for f in files {
            let p = d.path().join(f.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "").expect("write");
        }
        d
    }

    /// A scratch directory removed on drop (std only).
    mod tempdir {
        use std::path::{Path, PathBuf};
        #[derive(Debug)]
        pub struct Dir(PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicU32, Ordering};
                static N: AtomicU32 = AtomicU32::new(0);
                let p = std::env::temp_dir().join(format!(
                    "xfpx-vendor-test-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&p).expect("mkdir");
                Dir(p)
            }
            pub fn path(&self) -> &Path {
                &self.0
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn probes_driver_files() {
        let none = fake_root(&[]);
        assert_eq!(Drivers::probe(none.path()), Drivers { nvidia: false, amd: false });
        let nv = fake_root(&["/proc/driver/nvidia/version"]);
        assert_eq!(Drivers::probe(nv.path()), Drivers { nvidia: true, amd: false });
        let nv2 = fake_root(&["/dev/nvidiactl", "/dev/kfd"]);
        assert_eq!(Drivers::probe(nv2.path()), Drivers { nvidia: true, amd: true });
    }

    #[test]
    fn resolution() {
        let none = Drivers { nvidia: false, amd: false };
        let nv = Drivers { nvidia: true, amd: false };
        let amd = Drivers { nvidia: false, amd: true };
        assert_eq!(resolve(VendorChoice::Auto, nv, true, false).expect("nvidia"), Vendor::Nvidia);
        let e = resolve(VendorChoice::Auto, none, true, false).expect_err("no gpu").to_string();
        assert!(e.contains("no supported GPU"), "{e}");
        assert_eq!(resolve(VendorChoice::Auto, amd, true, false).expect("amd"), Vendor::Amd);
        assert_eq!(resolve(VendorChoice::Amd, amd, true, false).expect("amd"), Vendor::Amd);
        let e = resolve(VendorChoice::Amd, none, true, false).expect_err("amd").to_string();
        assert!(e.contains("no AMD GPU found") && e.contains("--emulate"), "{e}");
        // the emulated runtime needs no driver
        assert_eq!(resolve(VendorChoice::Amd, none, true, true).expect("emulated"), Vendor::AmdEmulated);
        assert_eq!(resolve(VendorChoice::Auto, nv, true, true).expect("emulated"), Vendor::AmdEmulated);
        assert!(resolve(VendorChoice::Nvidia, none, true, true).is_err());
        assert!(resolve(VendorChoice::Nvidia, none, true, false).is_err());
        assert_eq!(resolve(VendorChoice::Nvidia, none, false, false).expect("hook"), Vendor::Nvidia);
        assert_eq!(Vendor::AmdEmulated.name(), "amd-emulated");
    }
}
