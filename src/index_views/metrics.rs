//! A controller's own Prometheus page, given meaning: the families controller-runtime and
//! client-go register (`workqueue_*`, `controller_runtime_reconcile_*`,
//! `rest_client_requests_total`, `informer_*`) are read into named numbers, everything else
//! is kept raw. Counters and histograms mean little in one scrape, so [`Rates`] compares two:
//! adds and retries per second, reconciles per second by result, and p50/p99 of what was
//! observed between them.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;

use foldhash::{HashMap, HashMapExt};
use serde::Serialize;
use smallvec::SmallVec;

use crate::prometheus_text::{Family, LabelValue, MetricType, Sample, Suffix};
pub use crate::prometheus_text::{MetricsParseError, Problem};

/// A histogram's cumulative buckets (upper bound, count), with its count and sum.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Buckets {
    pub buckets: Vec<(f64, f64)>,
    pub count: f64,
    pub sum: f64,
}

impl Buckets {
    fn add(&mut self, other: &Buckets) {
        for &(bound, count) in &other.buckets {
            match self.buckets.iter_mut().find(|(b, _)| *b == bound) {
                Some((_, c)) => *c += count,
                None => self.buckets.push((bound, count)),
            }
        }
        self.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.count += other.count;
        self.sum += other.sum;
    }

    /// What was observed since `earlier` (a counter reset reads as everything anew).
    fn since(&self, earlier: &Buckets) -> Buckets {
        if self.count < earlier.count {
            return self.clone();
        }
        let buckets = self
            .buckets
            .iter()
            .map(|&(bound, count)| {
                let before = earlier
                    .buckets
                    .iter()
                    .find(|(b, _)| *b == bound)
                    .map_or(0.0, |(_, c)| *c);
                (bound, (count - before).max(0.0))
            })
            .collect();
        Buckets {
            buckets,
            count: self.count - earlier.count,
            sum: self.sum - earlier.sum,
        }
    }

    /// The `q` quantile, interpolated linearly within its bucket as Prometheus's
    /// `histogram_quantile` does; `None` with nothing observed. A quantile in the `+Inf`
    /// bucket is the highest finite bound.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.buckets.last().map(|b| b.1)?;
        if total <= 0.0 {
            return None;
        }
        let rank = q * total;
        let mut lower = (0.0, 0.0);
        for &(bound, count) in &self.buckets {
            if count >= rank {
                if bound.is_infinite() {
                    return Some(lower.0);
                }
                let within = count - lower.1;
                if within <= 0.0 {
                    return Some(bound);
                }
                return Some(lower.0 + (bound - lower.0) * (rank - lower.1) / within);
            }
            lower = (bound, count);
        }
        Some(lower.0)
    }
}

/// One series the page has that kscope gives no meaning to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RawSeries {
    pub name: String,
    pub labels: String,
    pub value: String,
}

/// One scrape's numbers, summed over controllers and queues where a page has several.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Reading {
    /// `workqueue_depth` by its `priority` label (controller-runtime's priority queue;
    /// `""` on a plain queue).
    pub depth_by_priority: BTreeMap<String, f64>,
    pub adds_total: Option<f64>,
    pub retries_total: Option<f64>,
    pub unfinished_work_seconds: Option<f64>,
    pub longest_running_processor_seconds: Option<f64>,
    pub queue_duration: Option<Buckets>,
    pub work_duration: Option<Buckets>,
    /// `controller_runtime_reconcile_total` by `result` (success, error, requeue, …).
    pub reconciles_by_result: BTreeMap<String, f64>,
    pub reconcile_errors_total: Option<f64>,
    pub reconcile_timeouts_total: Option<f64>,
    pub reconcile_time: Option<Buckets>,
    pub active_workers: Option<f64>,
    pub max_concurrent_reconciles: Option<f64>,
    /// client-go's `rest_client_requests_total` by `code`.
    pub requests_by_code: BTreeMap<String, f64>,
    /// client-go's informer numbers and KEP-5647's `stale_sync_skips_total`, by series.
    pub informer: BTreeMap<String, f64>,
    pub raw: Vec<RawSeries>,
}

impl Reading {
    /// Whether the page held no series at all: an empty answer parses as Prometheus text.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The queue's depth over every priority.
    pub fn depth(&self) -> Option<f64> {
        (!self.depth_by_priority.is_empty()).then(|| self.depth_by_priority.values().sum())
    }

    /// Requests answered `code` (`"409"`: conflicts; `"429"`: throttled).
    pub fn requests(&self, code: &str) -> f64 {
        self.requests_by_code.get(code).copied().unwrap_or(0.0)
    }
}

/// Reads a page in the Prometheus text format (0.0.4).
pub fn parse(text: &str) -> Result<Reading, MetricsParseError> {
    let page = crate::prometheus_text::parse(text)?;
    let mut families: Vec<_> = page.families.iter().collect();
    families.sort_by(|a, b| a.name.cmp(b.name));
    let mut reading = Reading::default();
    for family in families {
        read_family(&mut reading, family);
    }
    Ok(reading)
}

fn read_family(reading: &mut Reading, family: &Family<'_>) {
    let name = family.name;
    let sum = || Some(scalars(family).map(|s| s.value).sum());
    let buckets = || {
        let mut all: Option<Buckets> = None;
        if family.kind == MetricType::Histogram {
            for s in series(family) {
                all.get_or_insert_with(Buckets::default).add(&s.buckets);
            }
        }
        all
    };
    let by_label = |label: &str, into: &mut BTreeMap<String, f64>| {
        for s in scalars(family) {
            let key = s
                .labels()
                .find(|(l, _)| *l == label)
                .map(|(_, v)| v.unescape().into_owned())
                .unwrap_or_default();
            *into.entry(key).or_default() += s.value;
        }
    };
    match name {
        "workqueue_depth" => by_label("priority", &mut reading.depth_by_priority),
        "workqueue_adds_total" => reading.adds_total = sum(),
        "workqueue_retries_total" => reading.retries_total = sum(),
        "workqueue_unfinished_work_seconds" => reading.unfinished_work_seconds = sum(),
        "workqueue_longest_running_processor_seconds" => {
            reading.longest_running_processor_seconds =
                scalars(family).map(|s| s.value).reduce(f64::max);
        }
        "workqueue_queue_duration_seconds" => reading.queue_duration = buckets(),
        "workqueue_work_duration_seconds" => reading.work_duration = buckets(),
        "controller_runtime_reconcile_total" => {
            by_label("result", &mut reading.reconciles_by_result)
        }
        "controller_runtime_reconcile_errors_total" => reading.reconcile_errors_total = sum(),
        "controller_runtime_reconcile_timeouts_total" => reading.reconcile_timeouts_total = sum(),
        "controller_runtime_reconcile_time_seconds" => reading.reconcile_time = buckets(),
        "controller_runtime_active_workers" => reading.active_workers = sum(),
        "controller_runtime_max_concurrent_reconciles" => reading.max_concurrent_reconciles = sum(),
        "rest_client_requests_total" => by_label("code", &mut reading.requests_by_code),
        _ if name.starts_with("informer_") || name == "stale_sync_skips_total" => {
            for s in scalars(family) {
                reading
                    .informer
                    .insert(format!("{name}{}", labels(s.labels())), s.value);
            }
        }
        _ if matches!(family.kind, MetricType::Histogram | MetricType::Summary) => {
            for s in series(family) {
                reading.raw.push(RawSeries {
                    name: name.to_string(),
                    labels: labels(s.labels.iter().copied()),
                    value: format!("count={} sum={}", s.buckets.count, s.buckets.sum),
                });
            }
        }
        _ => {
            for s in scalars(family) {
                reading.raw.push(RawSeries {
                    name: name.to_string(),
                    labels: labels(s.labels()),
                    value: s.value.to_string(),
                });
            }
        }
    }
}

/// A counter's, gauge's or untyped family's own samples (a counter's `_created` is not one).
fn scalars<'f, 'a>(family: &'f Family<'a>) -> impl Iterator<Item = &'f Sample<'a>> {
    let scalar = !matches!(family.kind, MetricType::Histogram | MetricType::Summary);
    family
        .samples
        .iter()
        .filter(move |s| scalar && s.suffix == Suffix::None)
}

/// One histogram's or summary's samples of one label set (`le` and `quantile` aside).
struct Series<'a> {
    labels: SeriesKey<'a>,
    buckets: Buckets,
}

type SeriesKey<'a> = SmallVec<[(&'a str, LabelValue<'a>); 6]>;

/// A histogram or summary family's series, in the order they first appear; a histogram's
/// buckets sorted by bound.
fn series<'a>(family: &Family<'a>) -> Vec<Series<'a>> {
    let mut all: Vec<Series<'a>> = Vec::new();
    let mut by_labels: HashMap<SeriesKey<'a>, usize> = HashMap::new();
    for sample in &family.samples {
        let key: SeriesKey<'a> = sample
            .labels()
            .filter(|(l, _)| *l != "le" && *l != "quantile")
            .collect();
        // A series' samples are written together: most lines extend the last one.
        let at = match all.last() {
            Some(last) if last.labels == key => all.len() - 1,
            _ => *by_labels.entry(key.clone()).or_insert_with(|| {
                all.push(Series {
                    labels: key,
                    buckets: Buckets::default(),
                });
                all.len() - 1
            }),
        };
        let buckets = &mut all[at].buckets;
        match (sample.suffix, sample.bound) {
            (Suffix::Bucket, Some(bound)) => buckets.buckets.push((bound, sample.value)),
            (Suffix::Sum, _) => buckets.sum = sample.value,
            (Suffix::Count, _) => buckets.count = sample.value,
            _ => {}
        }
    }
    for s in &mut all {
        s.buckets.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    all
}

/// A label set as `{name="value",...}` with its values unescaped; empty without labels.
fn labels<'a>(set: impl Iterator<Item = (&'a str, LabelValue<'a>)>) -> String {
    let mut text = String::new();
    for (name, value) in set {
        text.push(if text.is_empty() { '{' } else { ',' });
        let _ = write!(text, "{name}=\"{}\"", value.unescape());
    }
    if !text.is_empty() {
        text.push('}');
    }
    text
}

/// What happened between two scrapes `seconds` apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Rates {
    pub seconds: f64,
    pub depth_before: Option<f64>,
    pub depth_after: Option<f64>,
    pub adds_per_second: Option<f64>,
    pub retries_per_second: Option<f64>,
    pub reconciles_per_second_by_result: BTreeMap<String, f64>,
    pub reconcile_p50_seconds: Option<f64>,
    pub reconcile_p99_seconds: Option<f64>,
    pub queue_p50_seconds: Option<f64>,
    pub queue_p99_seconds: Option<f64>,
    /// Requests refused as stale (409) and throttled (429) between the scrapes.
    pub conflicts: f64,
    pub throttled: f64,
}

impl Rates {
    pub fn between(before: &Reading, after: &Reading, seconds: f64) -> Rates {
        let seconds = seconds.max(f64::EPSILON);
        let per_second = |a: Option<f64>, b: Option<f64>| {
            let (a, b) = (a?, b?);
            // A counter that went down was reset (a restarted process): count from zero.
            Some(if b >= a { b - a } else { b } / seconds)
        };
        let increase = |a: f64, b: f64| if b >= a { b - a } else { b };
        let reconciles_per_second_by_result = after
            .reconciles_by_result
            .iter()
            .map(|(result, &n)| {
                let was = before.reconciles_by_result.get(result).copied();
                (result.clone(), increase(was.unwrap_or(0.0), n) / seconds)
            })
            .collect();
        let observed = |a: &Option<Buckets>, b: &Option<Buckets>| match (a, b) {
            (Some(a), Some(b)) => Some(b.since(a)),
            (None, Some(b)) => Some(b.clone()),
            _ => None,
        };
        let reconcile = observed(&before.reconcile_time, &after.reconcile_time);
        let queue = observed(&before.queue_duration, &after.queue_duration);
        Rates {
            seconds,
            depth_before: before.depth(),
            depth_after: after.depth(),
            adds_per_second: per_second(before.adds_total, after.adds_total),
            retries_per_second: per_second(before.retries_total, after.retries_total),
            reconciles_per_second_by_result,
            reconcile_p50_seconds: reconcile.as_ref().and_then(|b| b.quantile(0.5)),
            reconcile_p99_seconds: reconcile.as_ref().and_then(|b| b.quantile(0.99)),
            queue_p50_seconds: queue.as_ref().and_then(|b| b.quantile(0.5)),
            queue_p99_seconds: queue.as_ref().and_then(|b| b.quantile(0.99)),
            conflicts: increase(before.requests("409"), after.requests("409")),
            throttled: increase(before.requests("429"), after.requests("429")),
        }
    }

    /// Reconciles per second over every result.
    pub fn reconciles_per_second(&self) -> f64 {
        self.reconciles_per_second_by_result.values().sum()
    }
}

/// The last scrapes, bounded, for the panel's sparklines: at most `capacity` kept.
#[derive(Debug, Clone)]
pub struct MetricsHistory {
    capacity: usize,
    /// (seconds since some start, the reading)
    readings: VecDeque<(f64, Reading)>,
    rates: VecDeque<Rates>,
}

impl MetricsHistory {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(2),
            readings: VecDeque::new(),
            rates: VecDeque::new(),
        }
    }

    /// Adds a scrape taken at `at` seconds (monotonic).
    pub fn push(&mut self, at: f64, reading: Reading) {
        if let Some((was_at, was)) = self.readings.back() {
            self.rates
                .push_back(Rates::between(was, &reading, at - was_at));
        }
        self.readings.push_back((at, reading));
        while self.readings.len() > self.capacity {
            self.readings.pop_front();
        }
        while self.rates.len() > self.capacity {
            self.rates.pop_front();
        }
    }

    pub fn latest(&self) -> Option<&Reading> {
        self.readings.back().map(|(_, r)| r)
    }

    pub fn latest_rates(&self) -> Option<&Rates> {
        self.rates.back()
    }

    pub fn readings(&self) -> impl Iterator<Item = &Reading> {
        self.readings.iter().map(|(_, r)| r)
    }

    pub fn rates(&self) -> impl Iterator<Item = &Rates> {
        self.rates.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{controller="w",name="w",priority="0"} 3
workqueue_depth{controller="w",name="w",priority="10"} 2
# TYPE workqueue_adds_total counter
workqueue_adds_total{controller="w",name="w"} 100
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="w",result="success"} 40
controller_runtime_reconcile_total{controller="w",result="error"} 2
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{controller="w",le="0.1"} 10
controller_runtime_reconcile_time_seconds_bucket{controller="w",le="1"} 20
controller_runtime_reconcile_time_seconds_bucket{controller="w",le="+Inf"} 20
controller_runtime_reconcile_time_seconds_sum{controller="w"} 5
controller_runtime_reconcile_time_seconds_count{controller="w"} 20
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",method="PUT"} 9
rest_client_requests_total{code="409",method="PUT"} 4
# TYPE go_goroutines gauge
go_goroutines 42
"#;

    #[test]
    fn known_families_get_names_and_the_rest_stays_raw() {
        let r = parse(PAGE).expect("parses");
        assert_eq!(r.depth(), Some(5.0));
        assert_eq!(r.depth_by_priority.get("10"), Some(&2.0));
        assert_eq!(r.adds_total, Some(100.0));
        assert_eq!(r.reconciles_by_result.get("error"), Some(&2.0));
        assert_eq!(r.requests("409"), 4.0);
        assert_eq!(r.reconcile_time.as_ref().map(|b| b.count), Some(20.0));
        assert_eq!(r.raw.len(), 1);
        assert_eq!(r.raw[0].name, "go_goroutines");
    }

    #[test]
    fn rates_and_quantiles_come_from_what_changed_between_scrapes() {
        let before = parse(PAGE).expect("parses");
        let after = parse(
            &PAGE
                .replace("} 100", "} 120")
                .replace("le=\"1\"} 20", "le=\"1\"} 30")
                .replace("le=\"+Inf\"} 20", "le=\"+Inf\"} 30")
                .replace("_count{controller=\"w\"} 20", "_count{controller=\"w\"} 30")
                .replace("result=\"success\"} 40", "result=\"success\"} 50"),
        )
        .expect("parses");
        let rates = Rates::between(&before, &after, 2.0);
        assert_eq!(rates.adds_per_second, Some(10.0));
        assert_eq!(
            rates.reconciles_per_second_by_result.get("success"),
            Some(&5.0)
        );
        // Every new observation fell in (0.1, 1]: the median lies half way through it.
        let p50 = rates.reconcile_p50_seconds.expect("p50");
        assert!((p50 - 0.55).abs() < 1e-9, "{p50}");
    }

    #[test]
    fn summaries_histograms_and_untyped_series_kscope_does_not_know_stay_raw() {
        let r = parse(
            "# TYPE go_gc_duration_seconds summary\n\
             go_gc_duration_seconds{quantile=\"0.5\"} 0.001\n\
             go_gc_duration_seconds{quantile=\"1\"} 0.01\n\
             go_gc_duration_seconds_sum 0.5\ngo_gc_duration_seconds_count 120\n\
             # TYPE http_seconds histogram\n\
             http_seconds_bucket{path=\"/a\\\"b\",le=\"1\"} 3\n\
             http_seconds_bucket{path=\"/a\\\"b\",le=\"+Inf\"} 4\n\
             http_seconds_sum{path=\"/a\\\"b\"} 2.5\nhttp_seconds_count{path=\"/a\\\"b\"} 4\n\
             leader_election_master_status{name=\"w\"} 1\n",
        )
        .expect("parses");
        let raw: Vec<_> = r
            .raw
            .iter()
            .map(|s| (s.name.as_str(), s.labels.as_str(), s.value.as_str()))
            .collect();
        assert_eq!(
            raw,
            [
                ("go_gc_duration_seconds", "", "count=120 sum=0.5"),
                ("http_seconds", "{path=\"/a\"b\"}", "count=4 sum=2.5"),
                ("leader_election_master_status", "{name=\"w\"}", "1"),
            ]
        );
    }

    #[test]
    fn one_histogram_sums_its_series_and_sorts_its_buckets() {
        let r = parse(
            "# TYPE workqueue_work_duration_seconds histogram\n\
             workqueue_work_duration_seconds_bucket{name=\"a\",le=\"+Inf\"} 4\n\
             workqueue_work_duration_seconds_bucket{name=\"a\",le=\"0.1\"} 3\n\
             workqueue_work_duration_seconds_bucket{name=\"b\",le=\"0.1\"} 1\n\
             workqueue_work_duration_seconds_count{name=\"b\"} 2\n\
             workqueue_work_duration_seconds_bucket{name=\"b\",le=\"+Inf\"} 2\n\
             workqueue_work_duration_seconds_count{name=\"a\"} 4\n\
             workqueue_work_duration_seconds_sum{name=\"a\"} 1\n",
        )
        .expect("parses");
        assert_eq!(
            r.work_duration,
            Some(Buckets {
                buckets: vec![(0.1, 4.0), (f64::INFINITY, 6.0)],
                count: 6.0,
                sum: 1.0,
            })
        );
    }

    #[test]
    fn informer_series_are_keyed_by_their_labels() {
        let r = parse(
            "informer_list_duration_seconds{resource=\"pods\",group=\"\"} 0.2\n\
             stale_sync_skips_total 3\n",
        )
        .expect("parses");
        let keys: Vec<_> = r.informer.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            keys,
            [
                (
                    "informer_list_duration_seconds{resource=\"pods\",group=\"\"}",
                    0.2
                ),
                ("stale_sync_skips_total", 3.0),
            ]
        );
    }

    #[test]
    fn a_page_that_is_not_prometheus_text_says_which_line() {
        let e = parse("# TYPE go_goroutines gauge\ngo_goroutines 42\n<html>\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    #[test]
    fn history_keeps_a_bounded_window() {
        let mut h = MetricsHistory::new(3);
        for i in 0..10 {
            h.push(f64::from(i), parse(PAGE).expect("parses"));
        }
        assert_eq!(h.readings().count(), 3);
        assert_eq!(h.rates().count(), 3);
    }
}
