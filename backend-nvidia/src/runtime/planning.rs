//! How the tool core plans one function at its instrumentation: the
//! detector's plan (made at the launch, or ahead of it, see [`super::ahead`]),
//! or another tool's (counters, inject, flow), lowered to NVBit calls.

use super::{ahead, KernelNames, ToolCore};
use crate::counts::plan_counts;
use crate::dump::render_kernel;
use crate::lower::{CallInsertion, LowerError, NvbitLowering};
use crate::modes::plan_kernel;
use crate::sass::{into_kernel, parse_instruction, SassFunction};
use xfpx_common::config::{Mode, OutputFormat};
use xfpx_common::counters::CounterSource;
use xfpx_common::event::Event;
use xfpx_common::fault::FaultSpec;
use xfpx_common::lower::Lowering;
use xfpx_common::plan::Plan;
use xfpx_common::report::KernelStatus;
use xfpx_common::tool::ToolKind;

/// The tool that plans a run's functions ([`ToolCore::planner`]).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Planner {
    /// The detector (the default and screen runs): plans can be made ahead.
    Detector,
    /// The counters tool, with a fault's calls after its own when one is injected.
    Counters,
    /// One fault, nothing counted.
    Inject(FaultSpec),
    Flow,
    /// Hardware counters: nothing is instrumented.
    Nothing,
}

impl ToolCore {
    /// Plan and lower one function (a kernel or a function it calls) from
    /// its instructions `(offset, SASS text)`. Returns the calls to insert;
    /// a function that cannot be instrumented gets none and a reason.
    pub fn instrument_function(
        &mut self,
        names: KernelNames,
        instrs: &[(u64, String)],
        state_addr: u64,
    ) -> Result<Vec<CallInsertion>, String> {
        let name = Self::display_name(names);
        let result = self.plan_function(&name, names.mangled, instrs, state_addr);
        let (status, probes) = match &result {
            Ok((_, probes)) => (KernelStatus::Instrumented, *probes),
            Err(reason) => (KernelStatus::Skipped { reason: reason.clone() }, 0),
        };
        self.stream.collector_mut().kernel_status(&name, status.clone(), probes);
        self.emit(Event::Kernel { name, status, probes });
        result.map(|(calls, _)| calls)
    }

    fn plan_function(
        &mut self,
        name: &str,
        mangled: &str,
        instrs: &[(u64, String)],
        state_addr: u64,
    ) -> Result<(Vec<CallInsertion>, u64), String> {
        if self.lines_enabled && !self.lines.contains_key(mangled) {
            self.lines_pending.insert(name.to_string(), mangled.to_string());
        }
        let made_ahead = if self.plans_ahead() { self.ahead.take(mangled, ahead::WAIT) } else { None };
        let (kernel, planned) = match made_ahead.map(|p| (p.matches(instrs), p)) {
            Some((true, p)) => {
                self.ahead_used += 1;
                p.adopt(name, self.lines.get(mangled), &mut self.sites)
            }
            differed => {
                self.ahead_differed += u64::from(differed.is_some());
                let kernel = self.parsed_kernel(name, mangled, instrs)?;
                if let Some(other_tool) = self.plan_other_tool(name, mangled, &kernel, state_addr) {
                    return other_tool;
                }
                let planned = plan_kernel(&self.detector, &kernel, &mut self.sites, self.config.mode)?;
                (kernel, planned)
            }
        };
        if let Some(screen) = &mut self.screen {
            screen.planned(mangled, planned.formats.iter().copied());
            if let Some(k) = &self.instrumenting_for {
                screen.calls(k, mangled);
            }
        }
        if let Some(stats) = planned.thinned {
            self.thinned += stats;
        }
        if let Some(e) = &planned.fallback {
            let text = format!("{name}: every result checked (fast mode needs its control flow: {e})");
            self.note(&text);
        }
        if let Some(e) = &planned.partial_flow {
            let text = format!("{name}: checks that repeat an earlier one kept, and its checks not grouped ({e})");
            self.note(&text);
        }
        let plan = planned.plan;
        let lowering = NvbitLowering::new(&kernel, state_addr).map(|l| l.grouping(self.config.mode == Mode::Fast));
        let calls = self.lowered(lowering, &kernel, &plan)?;
        self.write_dump(mangled, &kernel, &plan, &calls);
        Ok((calls, plan.probes.len() as u64))
    }

    /// Which tool plans this run's functions: the one place that decides.
    fn planner(&self) -> Planner {
        if self.config.counter_source == CounterSource::Hardware {
            Planner::Nothing
        } else if self.counting.is_some() {
            Planner::Counters
        } else if let Some(fault) = self.config.fault.clone().filter(|_| self.config.tool == ToolKind::Inject) {
            Planner::Inject(fault)
        } else if self.config.tool == ToolKind::Flow {
            Planner::Flow
        } else {
            Planner::Detector
        }
    }

    /// Whether the functions' plans are the detector's (no other tool's),
    /// which can be made before their first launch ([`ahead`]).
    fn plans_ahead(&self) -> bool {
        matches!(self.planner(), Planner::Detector)
    }

    /// What plans the program's functions ahead of their first launches,
    /// when the detector plans them (`None` with another tool).
    pub fn ahead_planner(&self) -> Option<ahead::AheadPlanner> {
        self.plans_ahead().then(|| ahead::AheadPlanner {
            plans: self.ahead.clone(),
            detector: self.detector.clone(),
            mode: self.config.mode,
        })
    }

    /// A function's instructions `(offset, SASS text)` parsed, with the
    /// source lines known for it.
    fn parsed_kernel(
        &self,
        name: &str,
        mangled: &str,
        instrs: &[(u64, String)],
    ) -> Result<crate::sass::SassKernel, String> {
        let lines = self.lines.get(mangled);
        let mut parsed = Vec::with_capacity(instrs.len());
        for (offset, text) in instrs {
            let mut ins = parse_instruction(text).map_err(|e| format!("SASS at {offset:#x} not understood: {e}"))?;
            ins.offset = *offset;
            ins.location = lines.and_then(|t| t.get(offset).cloned());
            parsed.push(ins);
        }
        Ok(into_kernel(SassFunction { name: name.to_string(), instrs: parsed }))
    }

    /// The plan of a tool other than the detector, when the run uses one.
    fn plan_other_tool(
        &mut self,
        name: &str,
        mangled: &str,
        kernel: &crate::sass::SassKernel,
        state_addr: u64,
    ) -> Option<Result<(Vec<CallInsertion>, u64), String>> {
        match self.planner() {
            Planner::Nothing => Some(Err(
                "hardware counters instrument nothing (they are read by the CUPTI library, not the NVBit tool)".into(),
            )),
            Planner::Counters => Some(self.plan_counted(name, mangled, kernel)),
            Planner::Inject(fault) => Some(self.plan_injection(kernel, Some(mangled), &fault)),
            Planner::Flow => Some(self.plan_flow(name, kernel, mangled, state_addr)),
            Planner::Detector => None,
        }
    }

    /// A counted run's plan of one function: the counters', and a fault's
    /// calls after them when the run injects one too.
    fn plan_counted(
        &mut self,
        name: &str,
        mangled: &str,
        kernel: &crate::sass::SassKernel,
    ) -> Result<(Vec<CallInsertion>, u64), String> {
        let (mut calls, mut probes) = self.plan_counts(name, mangled, kernel)?;
        if let Some(fault) = self.config.fault.clone() {
            let (more, n) = self.plan_injection(kernel, None, &fault)?;
            calls.extend(more);
            probes += n;
        }
        Ok((calls, probes))
    }

    /// The counters tool's plan of one function: its slots follow those
    /// given out so far (see [`crate::count_run`]).
    fn plan_counts(
        &mut self,
        name: &str,
        mangled: &str,
        kernel: &crate::sass::SassKernel,
    ) -> Result<(Vec<CallInsertion>, u64), String> {
        let Some(counting) = &self.counting else { return Err("internal: not counting".into()) };
        let base = counting.next_base();
        let (cp, unknown) = plan_counts(kernel, &mut self.sites);
        xfpx_common::plan::verify(&cp.plan, &kernel.view, &self.sites)
            .map_err(|e| format!("internal: counting plan rejected: {e}"))?;
        let calls = self.lowered(NvbitLowering::new(kernel, 0).map(|l| l.count_slots_from(base)), kernel, &cp.plan)?;
        if let Some(e) = unknown {
            self.note(&format!("{name}: counted one region per instruction (control flow not known: {e})"));
        }
        self.write_dump(mangled, kernel, &cp.plan, &calls);
        let is_kernel = self.instrumenting_for.as_deref().is_none_or(|k| k == mangled);
        let probes = cp.plan.probes.len() as u64;
        if let Some(counting) = &mut self.counting {
            if is_kernel {
                counting.add_kernel(mangled, name, base, cp.layout);
            } else {
                counting.add_callee(base, cp.layout);
            }
        }
        Ok((calls, probes))
    }

    /// The inject tool's calls for one function (every launch of it runs
    /// them: the fault is permanent); `dump`: the function's name for
    /// `--dump` (a counted run dumps its counting plan instead).
    fn plan_injection(
        &mut self,
        kernel: &crate::sass::SassKernel,
        dump: Option<&str>,
        fault: &FaultSpec,
    ) -> Result<(Vec<CallInsertion>, u64), String> {
        if self.inject_state == 0 {
            return Err("the tool has no device memory for the fault's state".into());
        }
        let (ip, kernel) = crate::inject::plan_injection(kernel, fault, &mut self.sites)?;
        let calls = self.lowered(NvbitLowering::new(&kernel, self.inject_state), &kernel, &ip.plan)?;
        if let Some(mangled) = dump {
            self.write_dump(mangled, &kernel, &ip.plan, &calls);
        }
        Ok((calls, ip.plan.probes.len() as u64))
    }

    /// The flow tool's calls for one function (every launch of it runs
    /// them unless sampled), the class of each probed site kept for its records.
    fn plan_flow(
        &mut self,
        name: &str,
        kernel: &crate::sass::SassKernel,
        mangled: &str,
        state_addr: u64,
    ) -> Result<(Vec<CallInsertion>, u64), String> {
        let tool = xfpx_common::flow::FlowTool { instr_range: self.config.instr_range.map(|(a, b)| a..b) };
        let plan = crate::flow::flow_plan(kernel, &tool, &mut self.sites);
        xfpx_common::plan::verify(&plan, &kernel.view, &self.sites)
            .map_err(|e| format!("internal: flow plan rejected: {e}"))?;
        let lowering = NvbitLowering::new(kernel, state_addr).map(|l| l.flow_scratch(self.inject_state));
        let calls = self.lowered(lowering, kernel, &plan)?;
        if self.inject_state == 0 && calls.iter().any(|c| c.function == crate::abi::FLOW_HOLD) {
            return Err("the tool has no device memory for the flow scratch".into());
        }
        for p in &plan.probes {
            self.flow_classes.insert(p.site, kernel.view.instrs[p.instr as usize].class.label());
        }
        self.stream.collector_mut().expect_flow(name);
        self.write_dump(mangled, kernel, &plan, &calls);
        Ok((calls, plan.probes.len() as u64))
    }

    /// The calls `lowering` makes of `plan`; those it leaves out because a
    /// warpgroup MMA may be in flight where they would run are counted for
    /// the run's notes.
    fn lowered(
        &mut self,
        lowering: Result<NvbitLowering, LowerError>,
        kernel: &crate::sass::SassKernel,
        plan: &Plan,
    ) -> Result<Vec<CallInsertion>, String> {
        let mut lowering = lowering.map_err(|e| e.to_string())?;
        let calls = lowering.lower(&kernel.view, plan, &self.sites).map_err(|e| e.to_string())?;
        let left_out = lowering.left_out_in_flight() as u64;
        if left_out > 0 {
            self.in_flight_left_out.0 += left_out;
            self.in_flight_left_out.1.push(kernel.view.name.clone());
        }
        Ok(calls)
    }

    /// `--dump`: the function's plan and calls, written as text under the
    /// run's dump folder (a failure becomes a note).
    fn write_dump(&mut self, mangled: &str, kernel: &crate::sass::SassKernel, plan: &Plan, calls: &[CallInsertion]) {
        let Some(dir) = &self.config.dump_dir else { return };
        let file = dir.join(format!("{}.sass.txt", xfpx_common::names::file_stem(mangled)));
        let text = render_kernel(kernel, plan, calls, OutputFormat::Text);
        if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&file, text)) {
            let text = format!("cannot write dump {}: {e}", file.display());
            self.note(&text);
        }
    }
}
