use super::*;

fn flags(pairs: &[(&str, &str)]) -> FaultFlags {
    let mut f = FaultFlags::default();
    for &(k, v) in pairs {
        let v = Some(v.to_string());
        match k {
            "model" => f.model = v,
            "sm" => f.sm = v,
            "subpartition" => f.subpartition = v,
            "warps" => f.warps = v,
            "lanes" => f.lanes = v,
            "operand" => f.operand = v,
            "register" => f.register = v,
            "unit" => f.unit = v,
            "mask" => f.mask = v,
            "store" => f.target = v,
            "predicate" => f.predicate = v,
            "dim" => f.dim = v,
            "lane-fault" => f.lane_fault = v,
            _ => panic!("no flag {k}"),
        }
    }
    f
}

fn refused(pairs: &[(&str, &str)]) -> String {
    let e = flags(pairs).spec().expect_err("refused").0;
    assert!(!e.contains('\n'), "{e}");
    e
}

#[test]
fn every_model_has_a_valid_spec_that_round_trips_through_flags_and_json() {
    let examples: &[&[(&str, &str)]] = &[
        &[("model", "ioc"), ("unit", "fp")],
        &[("model", "IVOC")],
        &[("model", "IRA"), ("operand", "src1"), ("register", "7")],
        &[("model", "IRA"), ("operand", "dst"), ("register", "0x10")],
        &[("model", "IVRA"), ("operand", "dst")],
        &[("model", "IIO"), ("mask", "0x80000000")],
        &[("model", "IMS"), ("mask", "1")],
        &[("model", "IMD"), ("mask", "4"), ("store", "address")],
        &[("model", "WV"), ("predicate", "2")],
        &[("model", "IAT"), ("dim", "x"), ("mask", "8"), ("lanes", "0-3")],
        &[("model", "IAW"), ("dim", "y"), ("mask", "32"), ("warps", "1,4-5")],
        &[("model", "IAC"), ("dim", "z"), ("mask", "1")],
        &[("model", "IAL"), ("unit", "int"), ("lane-fault", "force"), ("lanes", "7")],
    ];
    let mut seen = Vec::new();
    for e in examples {
        let mut pairs = e.to_vec();
        pairs.extend([("sm", "3"), ("subpartition", "1")]);
        let spec = flags(&pairs).spec().unwrap_or_else(|err| panic!("{e:?}: {err}"));
        assert_eq!(spec.location.sm, 3);
        seen.push(spec.model);
        // back through the flags it writes
        let args = spec.to_args();
        let mut back = FaultFlags::default();
        for kv in args.chunks(2) {
            let v = Some(kv[1].clone());
            match kv[0].as_str() {
                "--model" => back.model = v,
                "--sm" => back.sm = v,
                "--subpartition" => back.subpartition = v,
                "--warps" => back.warps = v,
                "--lanes" => back.lanes = v,
                "--operand" => back.operand = v,
                "--register" => back.register = v,
                "--unit" => back.unit = v,
                "--mask" => back.mask = v,
                "--store" => back.target = v,
                "--predicate" => back.predicate = v,
                "--dim" => back.dim = v,
                "--lane-fault" => back.lane_fault = v,
                f => panic!("unknown flag {f}"),
            }
        }
        assert_eq!(back.spec().expect("its own flags"), spec);
        assert_eq!(FaultSpec::from_json(&spec.to_json()).expect("its own json"), spec);
    }
    seen.dedup();
    assert_eq!(seen, ErrorModel::ALL.to_vec(), "an example of every model, in order");
}

#[test]
fn refusals_are_one_line_and_say_why() {
    assert!(refused(&[("model", "XYZ"), ("sm", "0")]).contains("unknown error model `XYZ`"));
    assert!(refused(&[("sm", "0")]).contains("needs --model"));
    assert!(refused(&[("model", "IVOC")]).contains("--sm"));
    assert!(refused(&[("model", "IRA"), ("sm", "0"), ("operand", "src0")]).contains("IRA model needs --register"));
    assert!(refused(&[("model", "WV"), ("sm", "0"), ("predicate", "1"), ("mask", "1")])
        .contains("--mask does not apply to the WV model"));
    assert!(refused(&[("model", "IIO"), ("sm", "0"), ("mask", "0")]).contains("non-zero --mask"));
    assert!(refused(&[("model", "IIO"), ("sm", "0"), ("mask", "zz")]).contains("invalid --mask `zz`"));
    assert!(refused(&[("model", "IRA"), ("sm", "0"), ("operand", "left"), ("register", "1")]).contains("src0"));
    assert!(refused(&[("model", "IOC"), ("sm", "0"), ("unit", "tensor")]).contains("one of int, fp"));
    assert!(refused(&[("model", "IVOC"), ("sm", "0"), ("lanes", "3-1")]).contains("empty"));
    assert!(refused(&[("model", "IVOC"), ("sm", "0"), ("lanes", "64")]).contains("0 to 63"));
    assert!(refused(&[("model", "IAT"), ("sm", "0"), ("dim", "x"), ("mask", "1")]).contains("at least one thread"));
    assert!(refused(&[("model", "IAW"), ("sm", "0"), ("dim", "x"), ("mask", "33")]).contains("multiple of 32"));
    assert!(refused(&[("model", "IAW"), ("sm", "0"), ("dim", "x"), ("mask", "32"), ("lanes", "1")]).contains("--warps"));
}

#[test]
fn locations_select_threads() {
    let spec = flags(&[("model", "IVOC"), ("sm", "2"), ("subpartition", "1"), ("warps", "0,4-5"), ("lanes", "0-3,8")])
        .spec()
        .expect("valid");
    let l = &spec.location;
    assert!(l.selects(2, 1, 4, 8));
    assert!(l.selects(2, 1, 0, 0));
    assert!(!l.selects(2, 1, 3, 0), "warp 3 is not named");
    assert!(!l.selects(2, 0, 0, 0), "other sub-partition");
    assert!(!l.selects(1, 1, 0, 0), "other SM");
    assert!(!l.selects(2, 1, 0, 4), "lane 4 is not named");
    assert_eq!(l.lanes.to_string(), "0-3,8");
    assert_eq!(l.lanes.count(), 5);
    assert!(FaultLocation::sm(0).selects(0, 3, 99, 63));
}
