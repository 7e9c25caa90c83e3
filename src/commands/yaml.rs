//! YAML as `kubectl -o yaml` writes it, byte for byte: kubectl turns the object's JSON into
//! YAML with go-yaml v2 (through sigs.k8s.io/yaml), whose emitter is a port of libyaml's.
//! Scripts diff and grep that output, so this writer reproduces its choices rather than
//! those of a Rust YAML library: keys in go-yaml's "natural" order, sequences not indented
//! under their key, strings quoted only when plain would read back as something else (or
//! not at all), long lines folded at spaces past column 80, literal blocks for multi-line
//! strings.
//!
//! Not reproduced: what go-yaml's own parse of the JSON does to a raw U+0085 (NEL) or
//! U+FEFF inside a string.

use std::cmp::Ordering;

use serde_json::Value;

/// go-yaml's preferred line width: plain and quoted scalars are folded at a space once the
/// column passes it.
const BEST_WIDTH: usize = 80;
const BEST_INDENT: usize = 2;

/// `value` as kubectl's `-o yaml` prints it, ending in a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut emitter = Emitter {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
    };
    emitter.node(value, None, Context::Root);
    if emitter.column > 0 {
        emitter.put_break();
    }
    emitter.out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Root,
    MappingValue,
    SequenceItem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// The emitter's state as libyaml keeps it: the column (in characters), whether the last
/// thing written was whitespace, and whether only indentation is on the current line.
struct Emitter {
    out: String,
    column: usize,
    whitespace: bool,
    indention: bool,
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// Starts a line at `indent` unless the cursor already stands there.
    fn write_indent(&mut self, indent: usize) {
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    /// `parent` is the indentation of the collection holding this node (`None` at the root).
    fn node(&mut self, value: &Value, parent: Option<usize>, context: Context) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                let indent = parent.map_or(0, |p| p + BEST_INDENT);
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| natural_order(a.0, b.0));
                for (key, value) in entries {
                    self.write_indent(indent);
                    if is_simple_key(key) {
                        self.string(key, indent + BEST_INDENT, true);
                        self.write_indicator(":", false, false, false);
                    } else {
                        // `? key` then `: value` on a line of its own.
                        self.write_indicator("?", true, false, true);
                        self.string(key, indent + BEST_INDENT, false);
                        self.write_indent(indent);
                        self.write_indicator(":", true, false, true);
                    }
                    self.node(value, Some(indent), Context::MappingValue);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                // A sequence that is a mapping's value stands at its key's indentation.
                let indentless = context == Context::MappingValue && !self.indention;
                let indent = match parent {
                    None => 0,
                    Some(p) if indentless => p,
                    Some(p) => p + BEST_INDENT,
                };
                for item in items {
                    self.write_indent(indent);
                    self.write_indicator("-", true, false, true);
                    self.node(item, Some(indent), Context::SequenceItem);
                }
            }
            Value::Object(_) => self.empty_flow("{", "}"),
            Value::Array(_) => self.empty_flow("[", "]"),
            Value::String(s) => {
                self.string(s, parent.map_or(BEST_INDENT, |p| p + BEST_INDENT), false)
            }
            Value::Null => self.plain_token("null"),
            Value::Bool(b) => self.plain_token(if *b { "true" } else { "false" }),
            Value::Number(n) => {
                let text = match (n.as_i64(), n.as_u64(), n.as_f64()) {
                    (Some(i), _, _) => i.to_string(),
                    (None, Some(u), _) => u.to_string(),
                    (None, None, Some(f)) => yaml_float(f),
                    (None, None, None) => n.to_string(),
                };
                self.plain_token(&text);
            }
        }
    }

    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn plain_token(&mut self, text: &str) {
        if !self.whitespace {
            self.put(' ');
        }
        for c in text.chars() {
            self.put(c);
        }
        self.whitespace = false;
        self.indention = false;
    }

    /// A string at `indent` (where its folded lines continue); a `key` is a simple key,
    /// never folded.
    fn string(&mut self, s: &str, indent: usize, key: bool) {
        let requested = if s.contains('\n') {
            Style::Literal
        } else if resolves_as_string(s) && !is_base60_float(s) {
            Style::Plain
        } else {
            Style::DoubleQuoted
        };
        let analysis = Analysis::of(s);
        let mut style = requested;
        if key && analysis.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain && (!analysis.block_plain_allowed || (s.is_empty() && key)) {
            style = Style::SingleQuoted;
        }
        if style == Style::SingleQuoted && !analysis.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!analysis.block_allowed || key) {
            style = Style::DoubleQuoted;
        }
        let allow_breaks = !key;
        match style {
            Style::Plain => self.plain(s, indent, allow_breaks),
            Style::SingleQuoted => self.single_quoted(s, indent, allow_breaks),
            Style::DoubleQuoted => self.double_quoted(s, indent, allow_breaks),
            Style::Literal => self.literal(s, indent),
        }
    }

    fn plain(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !next_is_space {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn single_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let last = chars.len().saturating_sub(1);
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i < last
                    && !next_is_space
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn double_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        // libyaml compares byte offsets here; a space is one byte, so only the end differs.
        let mut offset = 0;
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            let at_last_byte = offset + c.len_utf8() >= s.len();
            offset += c.len_utf8();
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    other => {
                        let code = other as u32;
                        let (marker, digits) = match code {
                            0..=0xFF => ('x', 2),
                            0x100..=0xFFFF => ('u', 4),
                            _ => ('U', 8),
                        };
                        self.put(marker);
                        for digit in format!("{code:0digits$X}").chars() {
                            self.put(digit);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && !at_last_byte {
                    self.write_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.write_indicator("|", true, false, false);
        if s.starts_with([' ', '\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) {
            let hint = BEST_INDENT.to_string();
            self.write_indicator(&hint, false, false, false);
        }
        let mut tail = s.chars().rev();
        let chomp = match (tail.next(), tail.next()) {
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(before)) if is_break(before) => Some("+"),
            (None, _) => Some("-"),
            _ => None,
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in s.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }

    /// A line break taken from the scalar: `\n` as the output's break, others as they are.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }
}

/// Whether libyaml writes `key` as a simple key (`key: value`): one line, at most 128 bytes.
fn is_simple_key(key: &str) -> bool {
    key.len() <= 128 && !key.chars().any(is_break)
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's printable set (as go-yaml checks it: nothing beyond the Basic Multilingual
/// Plane is printable, so an emoji is written as an escape).
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        && c != '\u{FEFF}'
}

/// What libyaml's analysis of a scalar allows, in block context.
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

impl Analysis {
    fn of(s: &str) -> Self {
        if s.is_empty() {
            return Self {
                multiline: false,
                block_plain_allowed: true,
                single_quoted_allowed: true,
                block_allowed: false,
            };
        }
        let mut block_indicators = s.starts_with("---") || s.starts_with("...");
        let (mut line_breaks, mut special) = (false, false);
        let (mut leading_space, mut leading_break) = (false, false);
        let (mut trailing_space, mut trailing_break) = (false, false);
        let (mut break_space, mut space_break) = (false, false);
        let (mut previous_space, mut previous_break) = (false, false);
        let mut preceded_by_whitespace = true;
        let chars: Vec<char> = s.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            let last = i + 1 == chars.len();
            let followed_by_whitespace = chars.get(i + 1).is_none_or(|&n| n == ' ' || n == '\t');
            if i == 0 {
                match c {
                    '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\''
                    | '"' | '%' | '@' | '`' => block_indicators = true,
                    '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                    _ => {}
                }
            } else {
                match c {
                    ':' if followed_by_whitespace => block_indicators = true,
                    '#' if preceded_by_whitespace => block_indicators = true,
                    _ => {}
                }
            }
            if !is_printable(c) {
                special = true;
            }
            if c == ' ' {
                leading_space |= i == 0;
                trailing_space |= last;
                break_space |= previous_break;
                previous_space = true;
                previous_break = false;
            } else if is_break(c) {
                line_breaks = true;
                leading_break |= i == 0;
                trailing_break |= last;
                space_break |= previous_space;
                previous_space = false;
                previous_break = true;
            } else {
                previous_space = false;
                previous_break = false;
            }
            preceded_by_whitespace = c == ' ' || c == '\t' || is_break(c);
        }
        let mut block_plain_allowed = true;
        let mut single_quoted_allowed = true;
        let mut block_allowed = true;
        if leading_space || leading_break || trailing_space || trailing_break {
            block_plain_allowed = false;
        }
        if trailing_space {
            block_allowed = false;
        }
        if break_space {
            block_plain_allowed = false;
            single_quoted_allowed = false;
        }
        if space_break || special {
            block_plain_allowed = false;
            single_quoted_allowed = false;
            block_allowed = false;
        }
        if line_breaks || block_indicators {
            block_plain_allowed = false;
        }
        Self {
            multiline: line_breaks,
            block_plain_allowed,
            single_quoted_allowed,
            block_allowed,
        }
    }
}

/// go-yaml's order of map keys: digits compare as numbers, a letter after a non-letter.
fn natural_order(a: &str, b: &str) -> Ordering {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (a_letter, b_letter) = (a[i].is_alphabetic(), b[i].is_alphabetic());
        if a_letter && b_letter {
            return a[i].cmp(&b[i]);
        }
        if a_letter || b_letter {
            return if b_letter {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        // Runs of digits compare by value; a run continuing one with a non-zero digit
        // before it (`10` against `1_`) counts as non-zero.
        let nonzero_before = (a[i] == '0' || b[i] == '0')
            && a[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .any(|&c| c != '0');
        let run = |s: &[char]| -> (i64, usize) {
            let mut n: i64 = i64::from(nonzero_before);
            let mut end = i;
            while end < s.len() && s[end].is_ascii_digit() {
                n = n
                    .saturating_mul(10)
                    .saturating_add(i64::from(s[end] as u8 - b'0'));
                end += 1;
            }
            (n, end)
        };
        let ((an, ae), (bn, be)) = (run(&a), run(&b));
        if an != bn {
            return an.cmp(&bn);
        }
        if ae != be {
            return ae.cmp(&be);
        }
        return a[i].cmp(&b[i]);
    }
    a.len().cmp(&b.len())
}

/// Whether go-yaml reads `s`, written plain, back as a string (not null, a bool, a number
/// or a timestamp: YAML 1.1's `yes`, `on`, `0x1F`, `1_000`, `2026-01-01` all are not).
fn resolves_as_string(s: &str) -> bool {
    const NOT_STRINGS: [&str; 35] = [
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null",
        "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "-.inf",
    ];
    const MORE_INFINITIES: [&str; 4] = ["+.Inf", "+.INF", "-.Inf", "-.INF"];
    if NOT_STRINGS.contains(&s) || MORE_INFINITIES.contains(&s) {
        return false;
    }
    match s.as_bytes().first() {
        Some(b'.') => !is_go_float(s),
        Some(b'0'..=b'9' | b'+' | b'-') => {
            if is_timestamp(s) {
                return false;
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            !(is_go_int(&plain) || (is_yaml_float(&plain) && is_go_float(&plain)))
        }
        _ => true,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)` or `ParseUint` succeeding (and go-yaml's `0b`/`-0b`).
fn is_go_int(s: &str) -> bool {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(d) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (2, d)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return false;
    }
    match u128::from_str_radix(digits, radix) {
        Ok(n) if negative => n <= 1 << 63,
        Ok(n) => n <= u128::from(u64::MAX),
        Err(_) => false,
    }
}

/// go-yaml's float pattern: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_yaml_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    mantissa_ok && exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)))
}

/// Go's `strconv.ParseFloat(s, 64)` succeeding, for what can reach it here (decimal forms).
fn is_go_float(s: &str) -> bool {
    is_yaml_float(s) && s.parse::<f64>().is_ok()
}

/// go-yaml's base-60 float pattern (`1:20`, `-190:20:30.15`), quoted for older parsers.
fn is_base60_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (head, frac) = match s.split_once('.') {
        Some((h, f)) => (h, Some(f)),
        None => (s, None),
    };
    let mut parts = head.split(':');
    let first = parts.next().unwrap_or_default();
    let first_ok = first.starts_with(|c: char| c.is_ascii_digit())
        && first.chars().all(|c| c.is_ascii_digit() || c == '_');
    let mut sexagesimal = 0;
    for part in parts {
        let ok = match part.as_bytes() {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
        sexagesimal += 1;
    }
    first_ok
        && sexagesimal > 0
        && frac.is_none_or(|f| f.chars().all(|c| c.is_ascii_digit() || c == '_'))
}

/// go-yaml's timestamps: `YYYY-M-D`, optionally with a time (`T`, `t` or a space) as Go's
/// `time.Parse` accepts them in its formats.
fn is_timestamp(s: &str) -> bool {
    let Some((date, time)) = split_date(s) else {
        return false;
    };
    if !valid_date(date) {
        return false;
    }
    match time {
        None => true,
        Some((sep, time)) => valid_time(time, sep != ' '),
    }
}

fn split_date(s: &str) -> Option<(&str, Option<(char, &str)>)> {
    if s.len() < 5 || !s.as_bytes()[..4].iter().all(u8::is_ascii_digit) || s.as_bytes()[4] != b'-' {
        return None;
    }
    match s.find(['T', 't', ' ']) {
        Some(at) => Some((&s[..at], Some((s.as_bytes()[at] as char, &s[at + 1..])))),
        None => Some((s, None)),
    }
}

fn small_number(t: &str) -> Option<u32> {
    (matches!(t.len(), 1 | 2) && t.bytes().all(|b| b.is_ascii_digit()))
        .then(|| t.parse().ok())
        .flatten()
}

fn valid_date(date: &str) -> bool {
    let mut parts = date.split('-');
    let (Some(year), Some(month), Some(day), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Ok(year), Some(month), Some(day)) =
        (year.parse::<u32>(), small_number(month), small_number(day))
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `15:4:5.999999999` then, with a `T`, a zone `Z07:00` (`Z` or `±hh:mm`); with a space,
/// no zone.
fn valid_time(time: &str, zoned: bool) -> bool {
    let (clock, zone) = if zoned {
        match time.find(['Z', '+', '-']) {
            Some(at) => (&time[..at], &time[at..]),
            None => return false,
        }
    } else {
        (time, "")
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (clock, None),
    };
    let mut parts = hms.split(':');
    let (Some(h), Some(m), Some(sec), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let in_range = |t: &str, max: u32| small_number(t).is_some_and(|n| n <= max);
    let frac_ok = frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    let zone_ok = !zoned
        || zone == "Z"
        || (zone.len() == 6
            && zone.as_bytes()[3] == b':'
            && in_range(&zone[1..3], 23)
            && in_range(&zone[4..6], 59)
            && zone[1..3].len() == 2
            && zone[4..6].len() == 2);
    in_range(h, 23) && in_range(m, 59) && in_range(sec, 59) && frac_ok && zone_ok
}

/// A float as kubectl's YAML shows it: Go's JSON text of the float read back by go-yaml,
/// so an integral value is an integer and any other is Go's shortest `%g`.
fn yaml_float(f: f64) -> String {
    let json = super::go_numbers::go_json_float(f);
    if !json.contains(['.', 'e', 'E']) {
        return json;
    }
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let exponent_form = format!("{f:e}");
    let exponent: i32 = exponent_form
        .rsplit_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        super::go_numbers::go_exponent(&exponent_form)
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_quoted_as_go_yaml_quotes_them() {
        let value = json!({
            "plain": "info", "version": "2.0.3", "number": "9090", "bool": "true", "yes": "yes",
            "time": "2026-11-19T01:56:59Z", "date": "2026-01-01", "not a date": "2026-02-30",
            "colon": "a: b", "star": "*x", "empty": "", "quote": "it's", "tab": "a\tb",
            "hex": "0x1F", "sexagesimal": "1:20", "dot": ".5", "percent": "25%",
            "emoji": "x\u{1F600}", "control": "a\u{1}b", "trailing": "x ",
        });
        assert_eq!(
            to_yaml(&value),
            "bool: \"true\"\ncolon: 'a: b'\ncontrol: \"a\\x01b\"\ndate: \"2026-01-01\"\n\
             dot: \".5\"\nemoji: \"x\\U0001F600\"\nempty: \"\"\nhex: \"0x1F\"\n\
             not a date: 2026-02-30\nnumber: \"9090\"\npercent: 25%\nplain: info\n\
             quote: it's\nsexagesimal: \"1:20\"\nstar: '*x'\ntab: \"a\\tb\"\n\
             time: \"2026-11-19T01:56:59Z\"\ntrailing: 'x '\nversion: 2.0.3\n\
             \"yes\": \"yes\"\n"
        );
    }

    #[test]
    fn collections_nest_as_kubectl_prints_them() {
        let value = json!({
            "items": [{"b": [1, 2], "a": {"x": null}}, [true], {}, []],
            "empty": {}, "list": [],
            "multi": "line1\nline2\n", "lead": "  lead\nx", "only": "\n", "two": "a\nb",
        });
        assert_eq!(
            to_yaml(&value),
            "empty: {}\nitems:\n- a:\n    x: null\n  b:\n  - 1\n  - 2\n- - true\n- {}\n- []\n\
             lead: |2-\n    lead\n  x\nlist: []\nmulti: |\n  line1\n  line2\nonly: |2+\n\n\
             two: |-\n  a\n  b\n"
        );
    }

    #[test]
    fn long_strings_fold_past_column_eighty() {
        let words = "one two three four five six seven eight nine ten eleven twelve thirteen \
                     fourteen fifteen sixteen seventeen";
        let value = json!({"data": {"long": words, "quoted": format!("'{words}")}});
        assert_eq!(
            to_yaml(&value),
            "data:\n  long: one two three four five six seven eight nine ten eleven twelve \
             thirteen fourteen\n    fifteen sixteen seventeen\n  quoted: '''one two three \
             four five six seven eight nine ten eleven twelve thirteen\n    fourteen fifteen \
             sixteen seventeen'\n"
        );
    }

    #[test]
    fn keys_past_128_bytes_are_complex_keys() {
        let long = "k".repeat(130);
        let value = json!({"data": {long.clone(): "value", "short": "x"}});
        assert_eq!(
            to_yaml(&value),
            format!("data:\n  ? {long}\n  : value\n  short: x\n")
        );
    }

    #[test]
    fn keys_sort_in_go_yaml_natural_order() {
        let mut keys = vec!["ab", "a10", "a9", "a_b", "a-b", "A"];
        keys.sort_by(|a, b| natural_order(a, b));
        assert_eq!(keys, ["A", "a-b", "a_b", "a9", "a10", "ab"]);
    }

    #[test]
    fn numbers_read_as_go_yaml_reads_json() {
        assert_eq!(
            to_yaml(&json!({"a": 1.0, "b": 1.5, "c": 1234567.5, "d": 0.00001, "e": -3})),
            "a: 1\nb: 1.5\nc: 1.2345675e+06\nd: 1e-05\ne: -3\n"
        );
    }
}
