//! Launch screening in the tool core: how a launch is checked (screened,
//! instrumented, or unchecked and why), the kernels prepared in the
//! background meanwhile, the allocations the scans read, and the screened
//! findings the device's records make.

use super::{KernelNames, LaunchWay, ToolCore};
use crate::screen::device::{ScreenPlan, ScreenRecord, RECORD_SIZE as SCREEN_RECORD_SIZE};
use xfpx_common::event::Event;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::screened::{LaunchCheck, ScreenedBefore, ScreenedFinding, Unchecked};

impl ToolCore {
    /// How a launch is checked, and the scans of its buffers: a screened
    /// launch gets scans that report, an instrumented one a scan that
    /// only brings the counts up to date.
    pub(super) fn screen_launch(
        &mut self,
        names: KernelNames,
        way: LaunchWay,
        serial: u64,
        admitted: bool,
        instrument: bool,
        sampled: bool,
    ) -> (LaunchCheck, Option<ScreenPlan>) {
        let unchecked = |why: Unchecked| (LaunchCheck::Unchecked(Some(why)), None);
        if !admitted {
            return (LaunchCheck::Unchecked(None), None);
        }
        if matches!(way, LaunchWay::OtherContext) {
            return unchecked(Unchecked::OtherContext);
        }
        let screening = self.screen_ready && self.counting.is_none();
        let Some(screen) = self.screen.as_mut().filter(|_| screening) else {
            return match (instrument, sampled && self.stream.collector().full()) {
                (true, _) => (LaunchCheck::Instrumented, None),
                // the record limit, not sampling, left it out
                (false, true) => (LaunchCheck::Unchecked(None), None),
                (false, false) if self.config.sample_doubling || self.config.sample_every > 1 => {
                    unchecked(Unchecked::Sampled)
                }
                (false, false) => (LaunchCheck::Unchecked(None), None),
            };
        };
        let planned = match way {
            LaunchWay::Stream { params, layout } => {
                screen.plan(names.mangled, names.demangled, params, layout, serial, !instrument)
            }
            LaunchWay::ParamsUnknown => Err(Unchecked::ParamsUnknown),
            LaunchWay::Graph => Err(Unchecked::Graph),
            LaunchWay::OtherContext => Err(Unchecked::OtherContext),
        };
        for text in screen.take_notes() {
            self.note(&text);
        }
        match (instrument, planned) {
            (true, plan) => (LaunchCheck::Instrumented, plan.ok()),
            (false, Ok(plan)) => (LaunchCheck::Screened, Some(plan)),
            (false, Err(why)) => unchecked(why),
        }
    }

    /// Whether a kernel whose disassembly is not cached at its first launch
    /// runs screened while it is made in the background (launches are
    /// screened, and the run configuration allows it).
    pub fn prepares_in_background(&self) -> bool {
        self.screen.is_some() && self.screen_ready && self.config.tools.background_disassembly
    }

    /// `mangled`'s launches run screened until [`ToolCore::prepared`].
    pub fn preparing(&mut self, mangled: &str) {
        self.preparing.start(mangled);
    }

    /// `mangled` can be instrumented now: its sampling starts again, so
    /// that its next launch is instrumented.
    pub fn prepared(&mut self, mangled: &str) {
        if self.preparing.ready(mangled) {
            if let Some(entry) = self.kernels.get_mut(mangled) {
                entry.sample_from = entry.launches;
            }
        }
    }

    /// Whether launches are screened (the run asks for it and the device
    /// memory for it is not known to be missing).
    pub fn screening(&self) -> bool {
        self.screen.is_some()
    }

    /// The shim made the screen's device memory (`ok`), or could not: the
    /// launches sampling leaves out then run unchecked, as the notes say.
    pub fn screen_ready(&mut self, ok: bool) {
        self.screen_ready = ok && self.screen.is_some();
        if !ok && self.screen.take().is_some() {
            self.note("launch screening is off: the tool could not load its scan kernel or make its device memory (the CUDA error is noted); launches were instrumented as --sample says without screening, and the others ran unchecked");
        }
    }

    /// The program allocated `bytes` of device memory at `base` (for launch
    /// screening and launch capture).
    pub fn allocated(&mut self, base: u64, bytes: u64) {
        if let Some(s) = &mut self.screen {
            s.allocated(base, bytes);
        }
        if let Some(c) = &mut self.capture {
            c.allocated(base, bytes);
        }
    }

    /// The program freed the device allocation at `base`.
    pub fn freed(&mut self, base: u64) {
        if let Some(s) = &mut self.screen {
            s.freed(base);
        }
        if let Some(c) = &mut self.capture {
            c.freed(base);
        }
    }

    /// Kernel `kernel` calls function `callee` (its formats count for the
    /// kernel's screens).
    pub fn kernel_calls(&mut self, kernel: &str, callee: &str) {
        if let Some(s) = &mut self.screen {
            s.calls(kernel, callee);
        }
    }

    /// The screen of launch `serial`, counted as screened, could not be
    /// enqueued (`why`: the CUDA error).
    pub fn screen_lost(&mut self, serial: u64, why: &str) {
        let Some((kernel, _)) = self.launches.get(serial as usize).cloned() else { return };
        self.stream.collector_mut().screen_lost(&kernel);
        self.emit(Event::ScreenLost { kernel });
        self.note(&format!("a launch screen could not be enqueued ({why}); such launches ran unchecked"));
    }

    /// Records from the screen's ring, [`SCREEN_RECORD_SIZE`] bytes each: a
    /// buffer held more NaN or infinite values after a launch than at its
    /// scan before. Each growth is a screened finding; a finding new to its
    /// kernel starts the kernel's sampling again, so that its next launch
    /// runs instrumented and a recurrence is found at its line.
    pub fn on_screen_records(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(SCREEN_RECORD_SIZE) {
            match ScreenRecord::decode(chunk) {
                Ok(r) => self.screened_record(&r),
                Err(_) => self.screen_records_lost += 1,
            }
        }
    }

    fn screened_record(&mut self, r: &ScreenRecord) {
        let Some((kernel, index)) = self.launches.get(r.serial as usize).cloned() else {
            self.screen_records_lost += 1;
            return;
        };
        let mangled = self.launch_mangled(&kernel);
        let screened_before = if r.previous == r.serial {
            Some(ScreenedBefore { kernel: kernel.clone(), launch: index, just_before: true })
        } else {
            self.launches.get(r.previous as usize).map(|(k, i)| ScreenedBefore {
                kernel: k.clone(),
                launch: *i,
                just_before: false,
            })
        };
        let declared = mangled
            .as_deref()
            .and_then(|m| self.screen.as_ref().and_then(|s| s.declared_type(m, usize::from(r.param))));
        let grown = [(ExceptionKind::Nan, r.nan_before, r.nan_after), (ExceptionKind::Inf, r.inf_before, r.inf_after)];
        for (kind, before, after) in grown.into_iter().filter(|(_, b, a)| a > b) {
            let finding = ScreenedFinding {
                kind,
                format: r.format,
                param: u32::from(r.param),
                declared: declared.clone(),
                bytes: r.bytes,
                first_launch: index,
                before,
                after,
                first_element: r.first,
                screened_before: screened_before.clone(),
                again: 0,
            };
            if self.stream.collector_mut().screened(&kernel, finding.clone()) {
                if let Some(m) = &mangled {
                    if let Some(entry) = self.kernels.get_mut(m) {
                        entry.sample_from = entry.launches;
                    }
                }
            }
            self.emit(Event::Screened { kernel: kernel.clone(), finding });
        }
    }
}
