//! The Prometheus text exposition format (0.0.4), as client_golang renders a controller's
//! `/metrics` page, read by hand: `openmetrics-parser`'s grammar took ~95 ms on a 1 MB page
//! against a bound of 10 ms, and no other crate met it either (the fastest took 15 ms;
//! docs/benchmarks.md, metrics_page). One pass over the lines; names, label sets and help
//! texts are slices of the page, so a sample costs no allocation.

use std::borrow::Cow;

use foldhash::HashMap;
use smallvec::SmallVec;

/// Why a page is not Prometheus text, and on which line (counted from 1). The problem is
/// part of the message, not a source: it is this error's detail, not an error beneath it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the metrics page is not Prometheus text: line {line}: {problem}")]
pub struct MetricsParseError {
    pub line: usize,
    pub problem: Problem,
}

/// What was wrong with a line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("a metric name was expected, found {0:?}")]
    MetricName(String),
    #[error("a label name was expected, found {0:?}")]
    LabelName(String),
    #[error("`=` was expected after label {0:?}")]
    Equals(String),
    #[error("the value of label {0:?} does not start with `\"`")]
    Quote(String),
    #[error("the value of label {0:?} has no closing `\"`")]
    UnterminatedLabelValue(String),
    #[error("the value of label {label:?} has an unknown escape `\\{escape}`")]
    Escape { label: String, escape: char },
    #[error("`,` or `}}` was expected after label {0:?}")]
    LabelSeparator(String),
    #[error("label {0:?} is given twice")]
    DuplicateLabel(String),
    #[error("the sample has no value")]
    MissingValue,
    #[error("{0:?} is not a number")]
    Value(String),
    #[error("{0:?} is not a timestamp in milliseconds")]
    Timestamp(String),
    #[error("{0:?} follows the sample's timestamp")]
    TrailingText(String),
    #[error("the TYPE line of {0:?} names no type")]
    MissingType(String),
    #[error("{0:?} is not a metric type (counter, gauge, histogram, summary, untyped)")]
    UnknownType(String),
    #[error("{0:?} has a second TYPE line, or one after its samples")]
    LateType(String),
    #[error("{0:?} has a second HELP line")]
    SecondHelp(String),
    #[error("sample {name:?} of {kind} {family:?} has no `{label}` label")]
    MissingBound {
        name: String,
        kind: MetricType,
        family: String,
        label: &'static str,
    },
    #[error("the `{label}` label {value:?} is not a number")]
    Bound { label: &'static str, value: String },
    #[error("sample {0:?} of a histogram needs a _bucket, _sum or _count suffix")]
    HistogramSuffix(String),
}

/// A family's `# TYPE`; samples that have none are untyped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricType {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
}

impl MetricType {
    fn from_word(word: &str) -> Option<Self> {
        Some(match word {
            "counter" => Self::Counter,
            "gauge" => Self::Gauge,
            "histogram" => Self::Histogram,
            "summary" => Self::Summary,
            "untyped" => Self::Untyped,
            _ => return None,
        })
    }

    /// Which suffixed sample names belong to a family of this type.
    fn takes(self, suffix: Suffix) -> bool {
        match self {
            Self::Histogram => suffix != Suffix::None,
            Self::Summary => suffix != Suffix::Bucket,
            Self::Counter => matches!(suffix, Suffix::None | Suffix::Created),
            Self::Gauge | Self::Untyped => suffix == Suffix::None,
        }
    }
}

impl std::fmt::Display for MetricType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Histogram => "histogram",
            Self::Summary => "summary",
            Self::Untyped => "untyped",
        })
    }
}

/// What a sample's name adds to its family's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suffix {
    None,
    Bucket,
    Sum,
    Count,
    Created,
}

const SUFFIXES: [(&str, Suffix); 4] = [
    ("_bucket", Suffix::Bucket),
    ("_sum", Suffix::Sum),
    ("_count", Suffix::Count),
    ("_created", Suffix::Created),
];

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<'a> {
    pub suffix: Suffix,
    /// The label set as written, braces and escapes included (empty without one);
    /// [`Sample::labels`] reads it.
    pub labels: &'a str,
    pub value: f64,
    /// Milliseconds since the epoch, where the line gives one.
    pub timestamp: Option<i64>,
    /// A histogram bucket's `le` or a summary quantile's `quantile`, read as a number.
    pub bound: Option<f64>,
}

impl<'a> Sample<'a> {
    /// The labels as (name, value as written), in the line's order.
    pub fn labels(&self) -> Labels<'a> {
        let mut cursor = Cursor::new(self.labels);
        cursor.bump();
        Labels(cursor)
    }
}

/// A family: its `# TYPE` and `# HELP` and the samples of its name and suffixes.
#[derive(Debug, Clone, PartialEq)]
pub struct Family<'a> {
    pub name: &'a str,
    pub kind: MetricType,
    /// The help text, escapes as written.
    pub help: Option<&'a str>,
    pub samples: Vec<Sample<'a>>,
    typed: bool,
}

/// A page's families, in the order they first appear.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page<'a> {
    pub families: Vec<Family<'a>>,
}

/// A label value as written, escapes included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelValue<'a>(pub &'a str);

impl<'a> LabelValue<'a> {
    /// The value with `\\`, `\"` and `\n` undone; borrowed where it has none.
    pub fn unescape(self) -> Cow<'a, str> {
        if !self.0.contains('\\') {
            return Cow::Borrowed(self.0);
        }
        let mut out = String::with_capacity(self.0.len());
        let mut chars = self.0.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        }
        Cow::Owned(out)
    }
}

/// A sample's labels, read again from the text the parse checked.
#[derive(Debug, Clone)]
pub struct Labels<'a>(Cursor<'a>);

impl<'a> Iterator for Labels<'a> {
    type Item = (&'a str, LabelValue<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        // The text passed `next_label` once already: an error cannot come back here.
        next_label(&mut self.0).ok().flatten()
    }
}

/// Reads a page; the first malformed line is the error.
pub fn parse(text: &str) -> Result<Page<'_>, MetricsParseError> {
    let mut reader = Reader::default();
    for (at, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        reader.line(line).map_err(|problem| MetricsParseError {
            line: at + 1,
            problem,
        })?;
    }
    Ok(Page {
        families: reader.families,
    })
}

#[derive(Default)]
struct Reader<'a> {
    families: Vec<Family<'a>>,
    by_name: HashMap<&'a str, usize>,
}

impl<'a> Reader<'a> {
    fn line(&mut self, line: &'a str) -> Result<(), Problem> {
        let mut cursor = Cursor::new(line);
        cursor.skip_blanks();
        match cursor.peek() {
            None => Ok(()),
            Some(b'#') => {
                cursor.bump();
                self.comment(cursor)
            }
            Some(_) => self.sample(cursor),
        }
    }

    fn comment(&mut self, mut cursor: Cursor<'a>) -> Result<(), Problem> {
        cursor.skip_blanks();
        let keyword = cursor.token();
        if keyword != "HELP" && keyword != "TYPE" {
            return Ok(());
        }
        cursor.skip_blanks();
        let mut whole = cursor.clone();
        let name = metric_name(&mut cursor)?;
        if !matches!(cursor.peek(), None | Some(b' ' | b'\t')) {
            return Err(Problem::MetricName(whole.token().into()));
        }
        let at = self.index(name);
        let family = &mut self.families[at];
        if keyword == "HELP" {
            if family.help.is_some() {
                return Err(Problem::SecondHelp(name.to_string()));
            }
            cursor.skip_blanks();
            family.help = Some(cursor.rest());
            return Ok(());
        }
        cursor.skip_blanks();
        let word = cursor.token();
        if word.is_empty() {
            return Err(Problem::MissingType(name.to_string()));
        }
        let kind = MetricType::from_word(word).ok_or_else(|| Problem::UnknownType(word.into()))?;
        if family.typed || !family.samples.is_empty() {
            return Err(Problem::LateType(name.to_string()));
        }
        family.kind = kind;
        family.typed = true;
        Ok(())
    }

    /// Where the family named `name` is in `families` (an index `by_name` gives is always
    /// in range), made untyped if the page has none yet.
    fn index(&mut self, name: &'a str) -> usize {
        if let Some(&at) = self.by_name.get(name) {
            return at;
        }
        let at = self.families.len();
        self.families.push(Family {
            name,
            kind: MetricType::Untyped,
            help: None,
            samples: Vec::new(),
            typed: false,
        });
        self.by_name.insert(name, at);
        at
    }

    /// The family a sample of `name` belongs to and what its name adds to the family's.
    fn owner(&mut self, name: &'a str) -> (usize, Suffix) {
        // Samples come grouped by family: the last family is nearly always the one.
        if let Some(suffix) = self.families.last().and_then(|last| suffix_of(name, last)) {
            return (self.families.len() - 1, suffix);
        }
        if let Some(&at) = self.by_name.get(name) {
            return (at, Suffix::None);
        }
        for (text, suffix) in SUFFIXES {
            let Some(base) = name.strip_suffix(text) else {
                continue;
            };
            if let Some(&at) = self.by_name.get(base)
                && self.families.get(at).is_some_and(|f| f.kind.takes(suffix))
            {
                return (at, suffix);
            }
        }
        (self.index(name), Suffix::None)
    }

    fn sample(&mut self, mut cursor: Cursor<'a>) -> Result<(), Problem> {
        let name = metric_name(&mut cursor)?;
        let (at, suffix) = self.owner(name);
        let family = &mut self.families[at];
        let bound_label = match (family.kind, suffix) {
            (MetricType::Histogram, Suffix::None) => {
                return Err(Problem::HistogramSuffix(name.to_string()));
            }
            (MetricType::Histogram, Suffix::Bucket) => Some("le"),
            (MetricType::Summary, Suffix::None) => Some("quantile"),
            _ => None,
        };
        let mut labels = "";
        let mut bound = None;
        cursor.skip_blanks();
        if cursor.peek() == Some(b'{') {
            let start = cursor.at;
            cursor.bump();
            let mut seen: SmallVec<[&str; 8]> = SmallVec::new();
            while let Some((label, value)) = next_label(&mut cursor)? {
                if seen.contains(&label) {
                    return Err(Problem::DuplicateLabel(label.to_string()));
                }
                seen.push(label);
                if let Some(wanted) = bound_label.filter(|wanted| *wanted == label) {
                    let text = value.unescape();
                    let number = parse_float(&text).ok_or_else(|| Problem::Bound {
                        label: wanted,
                        value: text.to_string(),
                    })?;
                    bound = Some(number);
                }
            }
            labels = cursor.slice(start, cursor.at);
        }
        if let (Some(label), None) = (bound_label, bound) {
            return Err(Problem::MissingBound {
                name: name.to_string(),
                kind: family.kind,
                family: family.name.to_string(),
                label,
            });
        }
        cursor.skip_blanks();
        let value = cursor.token();
        if value.is_empty() {
            return Err(Problem::MissingValue);
        }
        let value = parse_float(value).ok_or_else(|| Problem::Value(value.to_string()))?;
        cursor.skip_blanks();
        let timestamp = match cursor.token() {
            "" => None,
            t => Some(t.parse().map_err(|_| Problem::Timestamp(t.to_string()))?),
        };
        cursor.skip_blanks();
        if !cursor.rest().is_empty() {
            return Err(Problem::TrailingText(cursor.rest().to_string()));
        }
        family.samples.push(Sample {
            suffix,
            labels,
            value,
            timestamp,
            bound,
        });
        Ok(())
    }
}

/// How `name` extends `family`'s name, if it is a sample name of that family.
fn suffix_of(name: &str, family: &Family<'_>) -> Option<Suffix> {
    let rest = name.strip_prefix(family.name)?;
    let suffix = if rest.is_empty() {
        Suffix::None
    } else {
        SUFFIXES.iter().find(|(text, _)| *text == rest)?.1
    };
    family.kind.takes(suffix).then_some(suffix)
}

/// A number as client_golang writes one (`NaN`, `+Inf`, `-Inf`, exponents): Rust's float
/// syntax reads them all; Go's hex floats, which no exporter writes, are refused.
fn parse_float(text: &str) -> Option<f64> {
    text.parse().ok()
}

fn metric_name<'a>(cursor: &mut Cursor<'a>) -> Result<&'a str, Problem> {
    let first = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b == b':';
    if !cursor.peek().is_some_and(first) {
        return Err(Problem::MetricName(cursor.token().to_string()));
    }
    Ok(cursor.take_while(|b| first(b) || b.is_ascii_digit()))
}

/// The next `name="value"` of a label set whose `{` was read, or `None` past its `}`.
fn next_label<'a>(cursor: &mut Cursor<'a>) -> Result<Option<(&'a str, LabelValue<'a>)>, Problem> {
    cursor.skip_blanks();
    if cursor.peek() == Some(b'}') {
        cursor.bump();
        return Ok(None);
    }
    if !cursor
        .peek()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
    {
        return Err(Problem::LabelName(cursor.token().to_string()));
    }
    let name = cursor.take_while(|b| b.is_ascii_alphanumeric() || b == b'_');
    cursor.skip_blanks();
    if cursor.peek() != Some(b'=') {
        return Err(Problem::Equals(name.to_string()));
    }
    cursor.bump();
    cursor.skip_blanks();
    if cursor.peek() != Some(b'"') {
        return Err(Problem::Quote(name.to_string()));
    }
    cursor.bump();
    let start = cursor.at;
    loop {
        match cursor.peek() {
            None => return Err(Problem::UnterminatedLabelValue(name.to_string())),
            Some(b'"') => break,
            Some(b'\\') => {
                cursor.bump();
                match cursor.peek() {
                    Some(b'\\' | b'"' | b'n') => cursor.bump(),
                    None => return Err(Problem::UnterminatedLabelValue(name.to_string())),
                    Some(_) => {
                        let escape = cursor.rest().chars().next().unwrap_or('\\');
                        return Err(Problem::Escape {
                            label: name.to_string(),
                            escape,
                        });
                    }
                }
            }
            Some(_) => cursor.bump(),
        }
    }
    let value = LabelValue(cursor.slice(start, cursor.at));
    cursor.bump();
    cursor.skip_blanks();
    match cursor.peek() {
        Some(b',') => cursor.bump(),
        Some(b'}') => {}
        _ => return Err(Problem::LabelSeparator(name.to_string())),
    }
    Ok(Some((name, value)))
}

/// A position in one line. It moves over ASCII bytes only (a multi-byte character is taken
/// whole by `token` and `rest`), so every slice it takes falls on character boundaries.
#[derive(Debug, Clone)]
struct Cursor<'a> {
    line: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(line: &'a str) -> Self {
        Self { line, at: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.line.as_bytes().get(self.at).copied()
    }

    fn bump(&mut self) {
        self.at += 1;
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.bump();
        }
    }

    fn take_while(&mut self, keep: impl Fn(u8) -> bool) -> &'a str {
        let start = self.at;
        while self.peek().is_some_and(&keep) {
            self.bump();
        }
        self.slice(start, self.at)
    }

    /// Up to the next blank or the end of the line.
    fn token(&mut self) -> &'a str {
        self.take_while(|b| b != b' ' && b != b'\t')
    }

    fn rest(&self) -> &'a str {
        self.line.get(self.at..).unwrap_or_default()
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.line.get(start..end).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
