//! The metrics page reader (`kscope_index_views::prometheus_text`, under `metrics::parse`) on
//! hostile bytes, read as text (lossily where they are not UTF-8):
//!
//! - nothing panics, and the page and the `Reading` built on it agree on whether, and on
//!   which line, the text is refused;
//! - a page it reads, written out again plainly (each family's HELP and TYPE, then its
//!   samples with their labels unescaped and escaped again, values in Rust's shortest form),
//!   reads back to the same families, samples, labels, values, timestamps and bounds.
//!
//! `tests/it/metrics_page_fuzz.rs` runs it on the seeds too.

use std::fmt::Write as _;

use kscope_index_views::metrics;
use kscope_index_views::prometheus_text::{Family, MetricType, Page, Sample, Suffix, parse};

/// Runs both checks on `data`; panics on a finding.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let page = parse(&text);
    match (&page, metrics::parse(&text)) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(b)) => assert_eq!(a, &b, "the page and the reading were refused apart"),
        (a, b) => panic!("the page and the reading disagree: {a:?} / {b:?}"),
    }
    let Ok(page) = page else {
        return;
    };
    let written = write(&page);
    let again = match parse(&written) {
        Ok(again) => again,
        Err(e) => panic!("the page written again is refused: {e}\n{written}"),
    };
    assert_eq!(
        read_back(&page),
        read_back(&again),
        "the page written again reads differently:\n{written}"
    );
}

fn write(page: &Page<'_>) -> String {
    let mut text = String::new();
    for family in &page.families {
        if let Some(help) = family.help {
            let _ = writeln!(text, "# HELP {} {help}", family.name);
        }
        let _ = writeln!(text, "# TYPE {} {}", family.name, family.kind);
        for sample in &family.samples {
            write_sample(&mut text, family, sample);
        }
    }
    text
}

fn write_sample(text: &mut String, family: &Family<'_>, sample: &Sample<'_>) {
    let suffix = match sample.suffix {
        Suffix::None => "",
        Suffix::Bucket => "_bucket",
        Suffix::Sum => "_sum",
        Suffix::Count => "_count",
        Suffix::Created => "_created",
    };
    let labels: Vec<String> = sample
        .labels()
        .map(|(name, value)| {
            let value = value
                .unescape()
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            format!("{name}=\"{value}\"")
        })
        .collect();
    let _ = write!(
        text,
        "{}{suffix}{{{}}} {}",
        family.name,
        labels.join(","),
        number(sample.value)
    );
    if let Some(t) = sample.timestamp {
        let _ = write!(text, " {t}");
    }
    text.push('\n');
}

fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value == f64::INFINITY {
        "+Inf".into()
    } else if value == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{value:e}")
    }
}

type ReadBack = (String, MetricType, Option<String>, Vec<SampleRead>);

/// A sample as compared: NaN values and bounds as a word, since NaN equals nothing.
type SampleRead = (Suffix, Vec<(String, String)>, String, Option<i64>, String);

fn read_back(page: &Page<'_>) -> Vec<ReadBack> {
    page.families
        .iter()
        .map(|f| {
            let samples = f
                .samples
                .iter()
                .map(|s| {
                    let labels = s
                        .labels()
                        .map(|(k, v)| (k.to_string(), v.unescape().into_owned()))
                        .collect();
                    let bound = s.bound.map(number).unwrap_or_default();
                    (s.suffix, labels, number(s.value), s.timestamp, bound)
                })
                .collect();
            (
                f.name.to_string(),
                f.kind,
                f.help.map(str::to_string),
                samples,
            )
        })
        .collect()
}
