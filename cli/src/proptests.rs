//! Property tests over arbitrary reports and bytes: report files round-trip
//! in both formats, hostile bytes never panic the reader, and any report
//! can be summarised.

use crate::{report_io, summary};
use proptest::prelude::*;
use xfpx_common::class::FpFormat;
use xfpx_common::fp::ExceptionKind;
use xfpx_common::report::{Collector, ExitStatus, KernelStatus, Report, RunInfo, SiteRef};
use xfpx_common::site::{SiteId, SourceLoc};

fn kind() -> impl Strategy<Value = ExceptionKind> {
    proptest::sample::select(ExceptionKind::ALL.to_vec())
}

fn format() -> impl Strategy<Value = FpFormat> {
    proptest::sample::select(FpFormat::ALL.to_vec())
}

fn exit() -> impl Strategy<Value = ExitStatus> {
    prop_oneof![
        any::<i32>().prop_map(|code| ExitStatus::Code { code }),
        (1i32..64).prop_map(|signal| ExitStatus::Signal { signal }),
        Just(ExitStatus::Unknown),
    ]
}

fn status() -> impl Strategy<Value = KernelStatus> {
    prop_oneof![
        Just(KernelStatus::Instrumented),
        Just(KernelStatus::Excluded),
        ".{0,40}".prop_map(|reason| KernelStatus::Skipped { reason }),
    ]
}

/// (kernel, kind, format, site id, offset, instr, location, launch, occurrences)
type Finding = (String, ExceptionKind, FpFormat, u32, u64, String, Option<(String, u32)>, u64, u64);

fn finding() -> impl Strategy<Value = Finding> {
    (
        "[a-z_]{1,3}|.{0,200}",
        kind(),
        format(),
        0u32..50,
        any::<u64>(),
        ".{0,60}",
        proptest::option::of((".{0,30}", any::<u32>())),
        0u64..1000,
        1u64..1_000_000,
    )
}

prop_compose! {
    fn report()(
        device in ".{0,40}",
        command in proptest::collection::vec(".{0,20}", 0..4),
        exit in exit(),
        sample_every in 0u32..100,
        notes in proptest::collection::vec(".{0,50}", 0..3),
        max_records in proptest::option::of(0u64..20),
        statuses in proptest::collection::vec(("[a-z]{1,3}", status(), any::<u64>()), 0..4),
        findings in proptest::collection::vec(finding(), 0..30),
    ) -> Report {
        let run = RunInfo {
            vendor: "nvidia".into(),
            device,
            target: None,
            command,
            mode: "detect".into(),
            started_unix: 0,
            finished_unix: Some(1),
            exit,
            sample_every,
            sample_auto: sample_every == 0,
            truncated: false,
            notes,
            attached: true,
        };
        let mut c = Collector::new(run, max_records);
        for (name, status, probes) in statuses {
            c.kernel_status(&name, status, probes);
            c.launch(&name, probes % 2 == 0);
        }
        for (kernel, kind, format, id, offset, instr, loc, launch, occ) in findings {
            let location = loc.map(|(file, line)| SourceLoc::new(file, line));
            let site = SiteRef { id: SiteId(id), offset, instr, location };
            c.record(&kernel, kind, format, site, launch, occ);
        }
        c.report()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn reports_round_trip_through_both_formats(r in report()) {
        let json = r.to_json();
        prop_assert_eq!(&report_io::parse(json.as_bytes()).expect("json"), &r);
        let packed = r.to_msgpack().expect("encode");
        prop_assert_eq!(&report_io::parse(&packed).expect("msgpack"), &r);
    }

    #[test]
    fn any_report_can_be_summarised(r in report()) {
        let text = summary::summary(&r, true);
        let records = r.records().count();
        let first = match r.nothing_checked() {
            Some(reason) => format!("xfpx: nothing was checked: {reason}"),
            None => format!("xfpx: {records} finding"),
        };
        prop_assert!(text.starts_with(&first), "{}", text);
        // Every (format, kind) total appears in the per-format table.
        let total: u64 = r.totals().values().sum();
        prop_assert_eq!(total as usize, records);
    }

    #[test]
    fn hostile_bytes_never_panic_the_reader(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = report_io::parse(&bytes);
    }

    #[test]
    fn damaged_reports_never_panic_the_reader(r in report(), cut in any::<prop::sample::Index>(), flip in any::<u8>()) {
        let mut packed = r.to_msgpack().expect("encode");
        if !packed.is_empty() {
            let i = cut.index(packed.len());
            packed[i] ^= flip;
            let _ = report_io::parse(&packed);
            let _ = report_io::parse(&packed[..i]);
        }
        let mut json = r.to_json().into_bytes();
        if !json.is_empty() {
            let i = cut.index(json.len());
            json[i] ^= flip;
            let _ = report_io::parse(&json);
        }
    }
}
