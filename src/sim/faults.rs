//! Injected faults: the failures a reflector must survive, switchable at run time.

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::resources::Resource;
use kscope_units::duration::parse_duration;

/// The active faults. All off by default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Cut every watch connection this long after it starts (abruptly, no clean end).
    #[serde(with = "millis")]
    pub drop_watch_every: Option<Duration>,
    /// Share of watches answered with an ERROR 410 event at once.
    pub watch_gone_ratio: f64,
    /// Share of resource requests failed with 500.
    pub error_ratio: f64,
    /// Share of resource requests throttled with 429.
    pub throttle_ratio: f64,
    /// Delay before each list page, and before each chunk of a watch's initial state after
    /// the first (a watch-list's pages, about 256 KiB each).
    #[serde(with = "millis")]
    pub list_delay: Option<Duration>,
    /// Shrinks the history window to this many events.
    pub history: Option<usize>,
    /// Resources (plural names) every request for which is refused with 403, as RBAC would
    /// refuse a user without a role binding for them.
    pub forbidden: Vec<String>,
    /// Watches asking for the initial state as events (sendInitialEvents, the watch-list)
    /// are refused with 422, as a server with the WatchList feature off refuses them.
    pub refuse_watch_list: bool,
}

/// How many times each fault fired since the sim started, so that a test can tell that the
/// failure it meant to survive really happened.
#[derive(Debug, Default)]
pub(crate) struct FaultsFired {
    pub internal_errors: AtomicU64,
    pub throttled: AtomicU64,
    pub watches_gone: AtomicU64,
    pub watches_dropped: AtomicU64,
}

/// A plain copy of the fault counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FaultsFiredSnapshot {
    pub internal_errors: u64,
    pub throttled: u64,
    pub watches_gone: u64,
    pub watches_dropped: u64,
}

impl FaultsFired {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> FaultsFiredSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        FaultsFiredSnapshot {
            internal_errors: get(&self.internal_errors),
            throttled: get(&self.throttled),
            watches_gone: get(&self.watches_gone),
            watches_dropped: get(&self.watches_dropped),
        }
    }
}

/// The rolls that decide which requests suffer a fault: one seeded sequence per sim, so
/// that the same seed fails the same requests by arrival order (the 17th resource request,
/// say), whatever the timing, and a test's faults fire the same way on every run.
pub(crate) struct FaultRolls(parking_lot::Mutex<StdRng>);

impl FaultRolls {
    /// A stream apart from the cluster's own (which the same seed also drives).
    const STREAM: u64 = 0xFA17_5EED;

    pub fn new(seed: u64) -> Self {
        Self(parking_lot::Mutex::new(StdRng::seed_from_u64(
            seed ^ Self::STREAM,
        )))
    }

    fn roll(&self) -> f64 {
        self.0.lock().random()
    }
}

/// What a request should suffer, decided once per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFault {
    None,
    InternalError,
    Throttle,
}

impl Faults {
    pub(crate) fn request_fault(&self, rolls: &FaultRolls) -> RequestFault {
        if self.error_ratio <= 0.0 && self.throttle_ratio <= 0.0 {
            return RequestFault::None;
        }
        let roll = rolls.roll();
        if roll < self.error_ratio {
            RequestFault::InternalError
        } else if roll < self.error_ratio + self.throttle_ratio {
            RequestFault::Throttle
        } else {
            RequestFault::None
        }
    }

    /// Whether requests for `resource` are refused with 403.
    pub fn forbids(&self, resource: Resource) -> bool {
        self.forbids_name(resource.plural())
    }

    /// Whether requests for `name` (a plural, or a subresource such as `pods/proxy`) are
    /// refused with 403.
    pub fn forbids_name(&self, name: &str) -> bool {
        self.forbidden.iter().any(|r| r == name)
    }

    pub(crate) fn watch_gone(&self, rolls: &FaultRolls) -> bool {
        self.watch_gone_ratio > 0.0 && rolls.roll() < self.watch_gone_ratio
    }

    /// Applies one `--fault name=value` setting.
    pub fn apply(&mut self, spec: &FaultSpec) {
        match spec {
            FaultSpec::DropWatch(d) => self.drop_watch_every = Some(*d),
            FaultSpec::WatchGone(r) => self.watch_gone_ratio = *r,
            FaultSpec::Error(r) => self.error_ratio = *r,
            FaultSpec::Throttle(r) => self.throttle_ratio = *r,
            FaultSpec::ListDelay(d) => self.list_delay = Some(*d),
            FaultSpec::History(n) => self.history = Some(*n),
            FaultSpec::RefuseWatchList(refuse) => self.refuse_watch_list = *refuse,
            FaultSpec::Forbid(names) => {
                for name in names {
                    if !self.forbids_name(name) {
                        self.forbidden.push(name.clone());
                    }
                }
            }
        }
    }
}

/// One fault as given on the command line.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultSpec {
    DropWatch(Duration),
    WatchGone(f64),
    Error(f64),
    Throttle(f64),
    ListDelay(Duration),
    History(usize),
    /// `refuse-watch-list=true`
    RefuseWatchList(bool),
    /// `forbid=nodes,pods`: repeatable, each adds to the refused set (plurals, or
    /// `pods/proxy` for the pod proxy alone).
    Forbid(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaultParseError {
    #[error(
        "unknown fault {0:?}; expected drop-watch=DURATION, watch-410=RATIO, error-500=RATIO, \
         throttle-429=RATIO, list-delay=DURATION, history=EVENTS, refuse-watch-list=BOOL or \
         forbid=RESOURCE[,RESOURCE] (or pods/proxy)"
    )]
    Unknown(String),
    #[error("bad value in {0:?}: {1}")]
    Value(String, String),
}

impl FromStr for FaultSpec {
    type Err = FaultParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, value) = s
            .split_once('=')
            .ok_or_else(|| FaultParseError::Unknown(s.to_string()))?;
        let bad = |why: String| FaultParseError::Value(s.to_string(), why);
        let ratio = || -> Result<f64, FaultParseError> {
            let r: f64 = value.parse().map_err(|e| bad(format!("{e}")))?;
            if (0.0..=1.0).contains(&r) {
                Ok(r)
            } else {
                Err(bad("a ratio is between 0 and 1".into()))
            }
        };
        match name {
            "drop-watch" => Ok(FaultSpec::DropWatch(parse_duration(value).map_err(bad)?)),
            "watch-410" => Ok(FaultSpec::WatchGone(ratio()?)),
            "error-500" => Ok(FaultSpec::Error(ratio()?)),
            "throttle-429" => Ok(FaultSpec::Throttle(ratio()?)),
            "list-delay" => Ok(FaultSpec::ListDelay(parse_duration(value).map_err(bad)?)),
            "history" => Ok(FaultSpec::History(
                value.parse().map_err(|e| bad(format!("{e}")))?,
            )),
            "refuse-watch-list" => Ok(FaultSpec::RefuseWatchList(
                value.parse().map_err(|e| bad(format!("{e}")))?,
            )),
            "forbid" => value
                .split(',')
                .map(|name| match name.trim() {
                    sub @ "pods/proxy" => Ok(sub.to_string()),
                    name => Resource::from_name(name)
                        .map(|r| r.plural().to_string())
                        .ok_or_else(|| bad(format!("the sim serves no resource {name:?}"))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(FaultSpec::Forbid),
            _ => Err(FaultParseError::Unknown(s.to_string())),
        }
    }
}

/// Durations travel as milliseconds in the admin endpoint's JSON.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&(d.as_millis() as u64)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same seed fails the same requests, by arrival order: what makes a fault test's
    /// "the fault fired" hold on every run rather than most.
    #[test]
    fn the_same_seed_rolls_the_same_faults() {
        let faults = Faults {
            error_ratio: 0.04,
            throttle_ratio: 0.04,
            ..Faults::default()
        };
        let sequence = |seed| {
            let rolls = FaultRolls::new(seed);
            (0..200)
                .map(|_| faults.request_fault(&rolls))
                .collect::<Vec<_>>()
        };
        for seed in [5, 15, 25] {
            let first = sequence(seed);
            assert_eq!(first, sequence(seed));
            // 8% of 200 rolls fail: the share holds, not only the order.
            let failed = first.iter().filter(|f| **f != RequestFault::None).count();
            assert!((5..=30).contains(&failed), "seed {seed}: {failed} of 200");
        }
        assert_ne!(sequence(5), sequence(6));
    }

    #[test]
    fn parses_fault_specs() {
        assert_eq!(
            "drop-watch=30s".parse::<FaultSpec>(),
            Ok(FaultSpec::DropWatch(Duration::from_secs(30)))
        );
        assert_eq!(
            "list-delay=250ms".parse::<FaultSpec>(),
            Ok(FaultSpec::ListDelay(Duration::from_millis(250)))
        );
        assert_eq!(
            "error-500=0.1".parse::<FaultSpec>(),
            Ok(FaultSpec::Error(0.1))
        );
        assert!("error-500=2".parse::<FaultSpec>().is_err());
        assert!("explode=1".parse::<FaultSpec>().is_err());
        assert_eq!(
            "forbid=nodes,pod".parse::<FaultSpec>(),
            Ok(FaultSpec::Forbid(vec!["nodes".into(), "pods".into()]))
        );
        assert!("forbid=nodes,widgets".parse::<FaultSpec>().is_err());
        assert_eq!(
            "refuse-watch-list=true".parse::<FaultSpec>(),
            Ok(FaultSpec::RefuseWatchList(true))
        );
    }

    #[test]
    fn forbid_adds_up_without_duplicates() {
        let mut f = Faults::default();
        f.apply(&FaultSpec::Forbid(vec!["nodes".into()]));
        f.apply(&FaultSpec::Forbid(vec![
            "nodes".into(),
            "pods/proxy".into(),
        ]));
        assert_eq!(f.forbidden, ["nodes", "pods/proxy"]);
        assert!(f.forbids_name("pods/proxy") && !f.forbids(Resource::Pods));
        assert_eq!(
            "forbid=pods/proxy".parse::<FaultSpec>(),
            Ok(FaultSpec::Forbid(vec!["pods/proxy".into()]))
        );
    }

    #[test]
    fn faults_round_trip_as_json() {
        let mut f = Faults::default();
        f.apply(&FaultSpec::DropWatch(Duration::from_millis(1500)));
        let text = serde_json::to_string(&f).unwrap();
        assert!(text.contains("\"drop_watch_every\":1500"));
        assert_eq!(serde_json::from_str::<Faults>(&text).unwrap(), f);
    }
}
