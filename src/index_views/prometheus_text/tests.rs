use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

fn page(text: &str) -> Page<'_> {
    parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn family<'p, 'a>(page: &'p Page<'a>, name: &str) -> &'p Family<'a> {
    page.families
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no family {name}: {page:#?}"))
}

fn error(text: &str) -> MetricsParseError {
    match parse(text) {
        Ok(page) => panic!("{text:?} parsed: {page:#?}"),
        Err(e) => e,
    }
}

fn unescaped(sample: &Sample<'_>) -> Vec<(String, String)> {
    sample
        .labels()
        .map(|(k, v)| (k.to_string(), v.unescape().into_owned()))
        .collect()
}

#[test]
fn help_and_type_name_a_family_of_each_type() {
    let p = page(
        "# HELP a_total Adds, with a \\\\ and a\\nnewline.\n# TYPE a_total counter\na_total 1\n\
         # TYPE b gauge\nb 2\n# TYPE c histogram\nc_bucket{le=\"+Inf\"} 0\n\
         # TYPE d summary\nd_sum 0\n# TYPE e untyped\ne 5\n",
    );
    let kinds: Vec<_> = p.families.iter().map(|f| (f.name, f.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("a_total", MetricType::Counter),
            ("b", MetricType::Gauge),
            ("c", MetricType::Histogram),
            ("d", MetricType::Summary),
            ("e", MetricType::Untyped),
        ]
    );
    assert_eq!(
        family(&p, "a_total").help,
        Some("Adds, with a \\\\ and a\\nnewline.")
    );
    assert_eq!(family(&p, "b").help, None);
}

#[test]
fn samples_without_a_type_are_untyped_families_of_their_own_name() {
    let p = page("go_goroutines 42\nx_sum 1\nx_count 2\n");
    let names: Vec<_> = p.families.iter().map(|f| (f.name, f.kind)).collect();
    assert_eq!(
        names,
        [
            ("go_goroutines", MetricType::Untyped),
            ("x_sum", MetricType::Untyped),
            ("x_count", MetricType::Untyped),
        ]
    );
}

#[test]
fn labels_are_read_with_their_escapes_undone() {
    let p = page(
        "a{path=\"C:\\\\dir\", msg = \"say \\\"hi\\\"\\nbye\" ,empty=\"\",uni=\"héllo\",} 1\n\
         b{} 2\nc 3\n",
    );
    let a = &family(&p, "a").samples[0];
    assert_eq!(
        unescaped(a),
        [
            ("path".into(), "C:\\dir".into()),
            ("msg".into(), "say \"hi\"\nbye".into()),
            ("empty".into(), String::new()),
            ("uni".into(), "héllo".into()),
        ]
    );
    // The value as written is kept, borrowed from the page.
    assert_eq!(a.labels().next().map(|(_, v)| v.0), Some("C:\\\\dir"));
    assert!(unescaped(&family(&p, "b").samples[0]).is_empty());
    assert_eq!(family(&p, "c").samples[0].labels, "");
}

#[test]
fn values_are_floats_as_go_writes_them_and_timestamps_milliseconds() {
    let p = page(
        "a NaN\nb +Inf\nc -Inf\nd 1.5e-3\ne -2E+2\nf 7 1700000000000\ng\t3\t-5 \n\
         h{x=\"y\"}4\n",
    );
    let value = |name| family(&p, name).samples[0].value;
    assert!(value("a").is_nan());
    assert_eq!(value("b"), f64::INFINITY);
    assert_eq!(value("c"), f64::NEG_INFINITY);
    assert_eq!(value("d"), 0.0015);
    assert_eq!(value("e"), -200.0);
    assert_eq!(value("h"), 4.0);
    assert_eq!(
        family(&p, "f").samples[0].timestamp,
        Some(1_700_000_000_000)
    );
    assert_eq!(family(&p, "g").samples[0].timestamp, Some(-5));
    assert_eq!(family(&p, "d").samples[0].timestamp, None);
}

#[test]
fn blank_lines_other_comments_and_carriage_returns_are_skipped() {
    let p = page("\n   \n# just a comment\n#\n# HELP\tx  two  spaces\r\n  x 1\r\n\n# EOF\n");
    assert_eq!(p.families.len(), 1);
    assert_eq!(family(&p, "x").samples[0].value, 1.0);
    assert_eq!(family(&p, "x").help, Some("two  spaces"));
    assert_eq!(page("").families, []);
}

#[test]
fn suffixed_samples_belong_to_their_histogram_or_summary() {
    let p = page(
        "# TYPE h histogram\nh_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\n\
         h_count 2\nh_created 1.7e9\n\
         # TYPE s summary\ns{quantile=\"0.99\"} 0.2\ns_sum 4\ns_count 9\n\
         # TYPE c_total counter\nc_total 5\nc_created 1.7e9\n\
         # TYPE g gauge\ng 1\ng_sum 2\n",
    );
    let suffixes = |name| -> Vec<_> {
        family(&p, name)
            .samples
            .iter()
            .map(|s| (s.suffix, s.bound))
            .collect()
    };
    assert_eq!(
        suffixes("h"),
        [
            (Suffix::Bucket, Some(0.5)),
            (Suffix::Bucket, Some(f64::INFINITY)),
            (Suffix::Sum, None),
            (Suffix::Count, None),
            (Suffix::Created, None),
        ]
    );
    assert_eq!(
        suffixes("s"),
        [
            (Suffix::None, Some(0.99)),
            (Suffix::Sum, None),
            (Suffix::Count, None),
        ]
    );
    // `c_created` is not `c_total` with a suffix: client_golang names it from the family
    // without `_total`, and so it is a family of its own here.
    assert_eq!(suffixes("c_total"), [(Suffix::None, None)]);
    // A gauge has no suffixed samples: `g_sum` is another (untyped) family.
    assert_eq!(suffixes("g"), [(Suffix::None, None)]);
    assert_eq!(family(&p, "g_sum").kind, MetricType::Untyped);
}

#[test]
fn a_family_split_across_the_page_is_still_one_family() {
    let p = page("# TYPE h histogram\nh_sum{a=\"1\"} 1\n# TYPE g gauge\ng 1\nh_count{a=\"1\"} 2\n");
    assert_eq!(p.families.len(), 2);
    assert_eq!(family(&p, "h").samples.len(), 2);
}

/// Each malformed line is refused with its line number and what was wrong with it.
#[test]
fn malformed_lines_say_their_line_and_problem() {
    let cases: [(&str, Problem); 20] = [
        ("a{x=\"open} 1", Problem::UnterminatedLabelValue("x".into())),
        (
            "a{x=\"ends in \\",
            Problem::UnterminatedLabelValue("x".into()),
        ),
        ("a{x=\"1\"}", Problem::MissingValue),
        ("a{x=\"1\"}   ", Problem::MissingValue),
        ("a 1.2.3", Problem::Value("1.2.3".into())),
        ("a one", Problem::Value("one".into())),
        ("a 1 12.5", Problem::Timestamp("12.5".into())),
        ("a 1 2 3", Problem::TrailingText("3".into())),
        (
            "a{x=\"\\t\"} 1",
            Problem::Escape {
                label: "x".into(),
                escape: 't',
            },
        ),
        ("a{x 1", Problem::Equals("x".into())),
        ("a{x=1} 1", Problem::Quote("x".into())),
        ("a{x=\"1\" y=\"2\"} 1", Problem::LabelSeparator("x".into())),
        ("a{x=\"1\",x=\"2\"} 1", Problem::DuplicateLabel("x".into())),
        ("a{1x=\"1\"} 1", Problem::LabelName("1x=\"1\"}".into())),
        ("<!DOCTYPE html>", Problem::MetricName("<!DOCTYPE".into())),
        (
            "{\"kind\":\"Status\"}",
            Problem::MetricName("{\"kind\":\"Status\"}".into()),
        ),
        ("# TYPE a", Problem::MissingType("a".into())),
        ("# TYPE a-b gauge", Problem::MetricName("a-b".into())),
        ("# HELP a.b Help.", Problem::MetricName("a.b".into())),
        ("# TYPE a counts", Problem::UnknownType("counts".into())),
    ];
    for (line, problem) in cases {
        // Two good lines first: the error counts lines from one.
        let text = format!("# a comment\nok 1\n{line}\nafter 1\n");
        let e = error(&text);
        assert_eq!((e.line, &e.problem), (3, &problem), "{line:?}");
        assert!(e.to_string().contains("line 3"), "{e}");
    }
}

#[test]
fn a_family_refuses_what_its_type_forbids() {
    let e = error("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket 2\n");
    assert_eq!(e.line, 3);
    assert!(
        matches!(e.problem, Problem::MissingBound { label: "le", .. }),
        "{e}"
    );
    let e = error("# TYPE h histogram\nh_bucket{le=\"soon\"} 1\n");
    assert_eq!(
        (e.line, e.problem),
        (
            2,
            Problem::Bound {
                label: "le",
                value: "soon".into()
            }
        )
    );
    let e = error("# TYPE s summary\ns 1\n");
    assert!(
        matches!(
            e.problem,
            Problem::MissingBound {
                label: "quantile",
                ..
            }
        ),
        "{e}"
    );
    let e = error("# TYPE h histogram\nh 1\n");
    assert_eq!(e.problem, Problem::HistogramSuffix("h".into()));
    let e = error("# TYPE a gauge\n# TYPE a gauge\n");
    assert_eq!((e.line, e.problem), (2, Problem::LateType("a".into())));
    let e = error("a 1\n# TYPE a gauge\n");
    assert_eq!((e.line, e.problem), (2, Problem::LateType("a".into())));
    let e = error("# HELP a one\n# HELP a two\n");
    assert_eq!((e.line, e.problem), (2, Problem::SecondHelp("a".into())));
}

/// A page the parser accepts, seen the way the property checks below read it back.
fn read_back(p: &Page<'_>) -> Vec<(String, MetricType, Vec<Sampled>)> {
    p.families
        .iter()
        .map(|f| {
            let samples = f
                .samples
                .iter()
                .map(|s| Sampled {
                    suffix: s.suffix,
                    labels: unescaped(s),
                    value: s.value,
                    timestamp: s.timestamp,
                })
                .collect();
            (f.name.to_string(), f.kind, samples)
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
struct Sampled {
    suffix: Suffix,
    labels: Vec<(String, String)>,
    value: f64,
    timestamp: Option<i64>,
}

const LABEL_CHARS: [char; 9] = ['a', 'Z', '0', ' ', '"', '\\', '\n', 'é', '}'];

fn label_value(rng: &mut StdRng) -> String {
    let n = rng.random_range(0..6);
    (0..n)
        .map(|_| LABEL_CHARS[rng.random_range(0..LABEL_CHARS.len())])
        .collect()
}

fn value(rng: &mut StdRng) -> f64 {
    match rng.random_range(0..6) {
        0 => f64::INFINITY,
        1 => f64::NEG_INFINITY,
        2 => f64::from(rng.random_range(-1000..1000)),
        _ => rng.random_range(-1e12..1e12),
    }
}

/// Writes `value` as Go's `strconv.FormatFloat(v, 'g', -1, 64)` would be read: Rust's
/// shortest round-trip form, with Go's words for the infinities.
fn write_value(value: f64) -> String {
    if value == f64::INFINITY {
        "+Inf".into()
    } else if value == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{value:e}")
    }
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A random family of a random type, rendered as client_golang would, and what it holds.
fn random_family(rng: &mut StdRng, at: usize) -> (String, (String, MetricType, Vec<Sampled>)) {
    let kinds = [
        MetricType::Counter,
        MetricType::Gauge,
        MetricType::Histogram,
        MetricType::Summary,
        MetricType::Untyped,
    ];
    let kind = kinds[rng.random_range(0..kinds.len())];
    let name = format!("f{at}_{}", ["x", "y:z", "_w"][rng.random_range(0..3)]);
    let mut text = format!("# HELP {name} Family {at}.\n# TYPE {name} {kind}\n");
    let mut samples = Vec::new();
    for series in 0..rng.random_range(0..4) {
        let labels: Vec<(String, String)> = (0..rng.random_range(0..3))
            .map(|i| (format!("l{i}"), label_value(rng)))
            .chain([("series".to_string(), series.to_string())])
            .collect();
        let bound_label = match kind {
            MetricType::Histogram => "le",
            _ => "quantile",
        };
        let lines: Vec<(Suffix, Option<f64>)> = match kind {
            MetricType::Histogram => vec![
                (Suffix::Bucket, Some(0.5)),
                (Suffix::Bucket, Some(f64::INFINITY)),
                (Suffix::Sum, None),
                (Suffix::Count, None),
            ],
            MetricType::Summary => vec![
                (Suffix::None, Some(0.99)),
                (Suffix::Sum, None),
                (Suffix::Count, None),
            ],
            _ => vec![(Suffix::None, None)],
        };
        for (suffix, bound) in lines {
            let mut labels = labels.clone();
            if let Some(bound) = bound {
                labels.push((bound_label.to_string(), write_value(bound)));
            }
            let suffix_text = match suffix {
                Suffix::None => "",
                Suffix::Bucket => "_bucket",
                Suffix::Sum => "_sum",
                Suffix::Count => "_count",
                Suffix::Created => "_created",
            };
            let written: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect();
            let v = value(rng);
            let timestamp = rng.random_bool(0.3).then(|| rng.random::<i64>());
            text.push_str(&format!(
                "{name}{suffix_text}{{{}}} {}{}\n",
                written.join(","),
                write_value(v),
                timestamp.map(|t| format!(" {t}")).unwrap_or_default()
            ));
            samples.push(Sampled {
                suffix,
                labels,
                value: v,
                timestamp,
            });
        }
    }
    (text, (name, kind, samples))
}

#[test]
fn rendered_random_families_read_back_as_they_were() {
    let mut rng = StdRng::seed_from_u64(35);
    for _ in 0..300 {
        let mut text = String::new();
        let mut expected = Vec::new();
        for at in 0..rng.random_range(1..5) {
            let (written, family) = random_family(&mut rng, at);
            text.push_str(&written);
            expected.push(family);
        }
        assert_eq!(read_back(&page(&text)), expected, "{text}");
    }
}

/// A page's every prefix, and the page with random bytes changed, parse or are refused:
/// nothing panics, whatever the bytes (cut inside a multi-byte character too, read lossily).
#[test]
fn no_input_panics() {
    let seed = "# HELP h Hé.\n# TYPE h histogram\nh_bucket{a=\"x\\\\y\\\"é\",le=\"0.1\"} 1 5\n\
                h_bucket{a=\"x\",le=\"+Inf\"} 2\nh_sum{a=\"x\"} NaN\nh_count{a=\"x\"} 2\n\
                # TYPE s summary\ns{quantile=\"0.5\"} -Inf\ns_count 1\ng{x=\"\\n\"} 1e3\n";
    assert!(parse(seed).is_ok());
    let bytes = seed.as_bytes();
    for end in 0..=bytes.len() {
        let _ = parse(&String::from_utf8_lossy(&bytes[..end]));
    }
    let alphabet = b"{}=\",\\ \t\n#_aZ9.+-eE";
    let mut rng = StdRng::seed_from_u64(35);
    for _ in 0..5000 {
        let mut mutated = bytes.to_vec();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..mutated.len());
            mutated[at] = if rng.random_bool(0.8) {
                alphabet[rng.random_range(0..alphabet.len())]
            } else {
                rng.random()
            };
        }
        let _ = parse(&String::from_utf8_lossy(&mutated));
    }
    for _ in 0..2000 {
        let noise: Vec<u8> = (0..rng.random_range(0..64))
            .map(|_| alphabet[rng.random_range(0..alphabet.len())])
            .collect();
        let _ = parse(&String::from_utf8_lossy(&noise));
    }
}
