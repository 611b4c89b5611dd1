//! The faults of a campaign: drawn at random from a seed, or every SM and
//! lane in turn for each model. The same choices give the same list on
//! every machine (the generator is this file's, not the platform's).

use xfpx_common::fault::{
    Dim, ErrorModel, FaultLocation, FaultParams, FaultSpec, LaneFault, LaneSet, OperandSel, StoreTarget, Unit,
};

/// Where and how faults are drawn.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Space {
    pub models: Vec<ErrorModel>,
    pub sms: Vec<u32>,
    pub subpartitions: u32,
    pub warps: u32,
    pub lanes: Vec<u32>,
    /// The highest register an IRA fault may address.
    pub max_register: u16,
}

/// Inclusive ranges of warp slots.
type WarpRanges = Vec<(u32, u32)>;

/// splitmix64: small, fast, and the same everywhere.
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len() as u64) as usize]
    }
}

/// Parameters for `model`, drawn from `rng`: one flipped bit for a mask
/// (within the index bits for IAT/IAC, a whole warp for IAW).
fn params(model: ErrorModel, rng: &mut Rng, space: &Space) -> FaultParams {
    let mut p = FaultParams::default();
    let bit = |rng: &mut Rng, bits: u64| 1u64 << rng.below(bits);
    match model {
        ErrorModel::Ioc => p.unit = Some(rng.pick(&[Unit::Int, Unit::Fp])),
        ErrorModel::Ivoc => {}
        ErrorModel::Ira | ErrorModel::Ivra => {
            p.operand = Some(rng.pick(&[OperandSel::Src(0), OperandSel::Src(1), OperandSel::Dst]));
            if model == ErrorModel::Ira {
                p.register = Some(rng.below(u64::from(space.max_register) + 1) as u16);
            }
        }
        ErrorModel::Iio | ErrorModel::Ims => p.mask = Some(bit(rng, 32)),
        ErrorModel::Imd => {
            p.mask = Some(bit(rng, 32));
            p.target = Some(rng.pick(&[StoreTarget::Data, StoreTarget::Address]));
        }
        ErrorModel::Wv => p.predicate = Some(rng.below(7) as u8),
        ErrorModel::Iat => {
            p.dim = Some(Dim::X);
            p.mask = Some(bit(rng, 5));
        }
        ErrorModel::Iaw => {
            p.dim = Some(Dim::X);
            p.mask = Some(32 << rng.below(3));
        }
        ErrorModel::Iac => {
            p.dim = Some(Dim::X);
            p.mask = Some(bit(rng, 4));
        }
        ErrorModel::Ial => {
            p.unit = Some(rng.pick(&[Unit::Int, Unit::Fp]));
            p.lane_fault = Some(rng.pick(&[LaneFault::Ignore, LaneFault::Force]));
        }
    }
    p
}

/// `n` faults drawn from `seed`, the models taken in turn.
pub fn random(space: &Space, n: u32, seed: u64) -> Vec<FaultSpec> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let model = space.models[i as usize % space.models.len()];
            let params = params(model, &mut rng, space);
            let warp = rng.below(u64::from(space.warps)) as u32;
            let location = FaultLocation {
                sm: rng.pick(&space.sms),
                subpartition: Some(rng.below(u64::from(space.subpartitions)) as u32),
                warps: Some(vec![(warp, warp)]),
                // IAW takes whole warps
                lanes: if model == ErrorModel::Iaw { LaneSet::ALL } else { LaneSet(1 << rng.pick(&space.lanes)) },
            };
            FaultSpec { model, params, location }
        })
        .collect()
}

/// Every model on every SM and lane (IAW: every warp slot instead of
/// lanes), parameters drawn from `seed`.
pub fn exhaustive(space: &Space, seed: u64) -> Vec<FaultSpec> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for &model in &space.models {
        for &sm in &space.sms {
            // (warps, lanes) of each run
            let places: Vec<(Option<WarpRanges>, LaneSet)> = if model == ErrorModel::Iaw {
                (0..space.warps).map(|w| (Some(vec![(w, w)]), LaneSet::ALL)).collect()
            } else {
                space.lanes.iter().map(|&l| (None, LaneSet(1 << l))).collect()
            };
            for (warps, lanes) in places {
                let params = params(model, &mut rng, space);
                out.push(FaultSpec { model, params, location: FaultLocation { sm, subpartition: None, warps, lanes } });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> Space {
        Space {
            models: ErrorModel::ALL.to_vec(),
            sms: vec![0, 3],
            subpartitions: 4,
            warps: 16,
            lanes: (0..32).collect(),
            max_register: 31,
        }
    }

    #[test]
    fn random_faults_are_valid_reproducible_and_cover_the_models() {
        let a = random(&space(), 240, 7);
        assert_eq!(a, random(&space(), 240, 7), "same seed, same faults");
        assert_ne!(a, random(&space(), 240, 8), "another seed, other faults");
        for f in &a {
            f.validate().unwrap_or_else(|e| panic!("{f}: {e}"));
            assert!([0, 3].contains(&f.location.sm));
        }
        for m in ErrorModel::ALL {
            assert_eq!(a.iter().filter(|f| f.model == m).count(), 20, "{m}");
        }
        // lanes are spread over the range asked for
        let lanes: std::collections::BTreeSet<u64> =
            a.iter().filter(|f| f.model != ErrorModel::Iaw).map(|f| f.location.lanes.0).collect();
        assert!(lanes.len() > 16, "{lanes:?}");
    }

    #[test]
    fn exhaustive_covers_every_sm_and_lane() {
        let mut s = space();
        s.models = vec![ErrorModel::Ivoc, ErrorModel::Iaw];
        let all = exhaustive(&s, 1);
        assert_eq!(all.len(), 2 * 32 + 2 * 16);
        for f in &all {
            f.validate().unwrap_or_else(|e| panic!("{f}: {e}"));
        }
        for sm in [0, 3] {
            for lane in 0..32 {
                assert!(all.iter().any(|f| f.model == ErrorModel::Ivoc
                    && f.location.sm == sm
                    && f.location.lanes == LaneSet(1 << lane)));
            }
        }
    }
}
