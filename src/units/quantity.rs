//! Kubernetes resource quantities (`250m`, `512Mi`, `1.5`, `2e3`), exactly, in thousandths:
//! enough to print them in the canonical form the API server and kubectl print, and to add
//! them up: a node's allocated resources (describe), what fits on it (the sim's scheduler).

use std::fmt;

/// A quantity in thousandths of a unit (a millicore, a thousandth of a byte); fractions
/// below that round up, as the API's own `MilliValue` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Amount {
    milli: i128,
}

/// How a quantity is written, which decides how its canonical form is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `Ki`, `Mi`, …
    BinarySi,
    /// `m`, none, `k`, `M`, … (and exponents, printed this way too)
    DecimalSi,
}

impl Amount {
    pub const ZERO: Amount = Amount { milli: 0 };
    pub const ONE: Amount = Amount { milli: 1000 };

    pub fn is_zero(self) -> bool {
        self.milli == 0
    }

    pub fn milli(self) -> i128 {
        self.milli
    }

    /// The whole units, rounded up.
    pub fn value(self) -> i128 {
        (self.milli + 999).div_euclid(1000)
    }

    pub fn saturating_add(self, other: Amount) -> Amount {
        Amount {
            milli: self.milli.saturating_add(other.milli),
        }
    }

    /// `self / divisor` in whole units, rounded up (the downward API's resource values).
    pub fn div_ceil(self, divisor: Amount) -> i128 {
        if divisor.milli == 0 {
            return 0;
        }
        let q = self.milli / divisor.milli;
        if self.milli % divisor.milli != 0 && (self.milli > 0) == (divisor.milli > 0) {
            q + 1
        } else {
            q
        }
    }

    /// The canonical text in `format`, as `resource.Quantity.String()` writes it.
    pub fn canonical(self, format: Format) -> String {
        if self.milli == 0 {
            return "0".to_owned();
        }
        if format == Format::BinarySi && self.milli % 1000 == 0 {
            let mut value = self.milli / 1000;
            let mut suffix = 0;
            const SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
            while suffix + 1 < SUFFIXES.len() && value % 1024 == 0 && value.abs() >= 1024 {
                value /= 1024;
                suffix += 1;
            }
            return format!("{value}{}", SUFFIXES[suffix]);
        }
        // Decimal: the largest power of 1000 that keeps the mantissa whole.
        const SUFFIXES: [&str; 8] = ["m", "", "k", "M", "G", "T", "P", "E"];
        let mut value = self.milli;
        let mut suffix = 0;
        while suffix + 1 < SUFFIXES.len() && value % 1000 == 0 {
            value /= 1000;
            suffix += 1;
        }
        format!("{value}{}", SUFFIXES[suffix])
    }
}

impl fmt::Display for Amount {
    /// Whole units (the downward API's values).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value())
    }
}

/// Parses a quantity; `None` for text that is not one.
pub fn parse(s: &str) -> Option<Amount> {
    parse_with_format(s).map(|(amount, _)| amount)
}

pub fn parse_with_format(s: &str) -> Option<(Amount, Format)> {
    let s = s.trim();
    let (negative, s) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let number_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(number_end);
    if number.is_empty() || number == "." {
        return None;
    }
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if fraction.contains('.') {
        return None;
    }
    // The number as digits over 10^scale.
    let digits: String = format!("{whole}{fraction}");
    let mantissa: i128 = digits.parse().ok()?;
    let scale = i32::try_from(fraction.len()).ok()?;
    let (multiplier, ten_power, format): (i128, i32, Format) = match suffix {
        "" => (1, 0, Format::DecimalSi),
        "m" => (1, -3, Format::DecimalSi),
        "u" => (1, -6, Format::DecimalSi),
        "n" => (1, -9, Format::DecimalSi),
        "k" => (1, 3, Format::DecimalSi),
        "M" => (1, 6, Format::DecimalSi),
        "G" => (1, 9, Format::DecimalSi),
        "T" => (1, 12, Format::DecimalSi),
        "P" => (1, 15, Format::DecimalSi),
        "E" => (1, 18, Format::DecimalSi),
        "Ki" => (1 << 10, 0, Format::BinarySi),
        "Mi" => (1 << 20, 0, Format::BinarySi),
        "Gi" => (1 << 30, 0, Format::BinarySi),
        "Ti" => (1 << 40, 0, Format::BinarySi),
        "Pi" => (1 << 50, 0, Format::BinarySi),
        "Ei" => (1 << 60, 0, Format::BinarySi),
        exp if exp.starts_with(['e', 'E']) => (1, exp[1..].parse().ok()?, Format::DecimalSi),
        _ => return None,
    };
    // milli = mantissa * multiplier * 10^(ten_power + 3 - scale), rounded up.
    let power = ten_power + 3 - scale;
    let base = mantissa.checked_mul(multiplier)?;
    let milli = if power >= 0 {
        base.checked_mul(10i128.checked_pow(u32::try_from(power).ok()?)?)?
    } else {
        let divisor = 10i128.checked_pow(u32::try_from(-power).ok()?)?;
        base / divisor + i128::from(base % divisor != 0)
    };
    let milli = if negative { -milli } else { milli };
    Some((Amount { milli }, format))
}

/// The canonical form of a quantity's text, as the API server returns it; unparsable text
/// unchanged.
pub fn canonical(s: &str) -> String {
    match parse_with_format(s) {
        Some((amount, format)) => amount.canonical(format),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_match_the_api_servers() {
        for (given, expected) in [
            ("250m", "250m"),
            ("1000m", "1"),
            ("1.5", "1500m"),
            ("0.1", "100m"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("512Mi", "512Mi"),
            ("1024Mi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("0", "0"),
            ("1e3", "1k"),
            ("10G", "10G"),
        ] {
            assert_eq!(canonical(given), expected, "{given}");
        }
        assert_eq!(canonical("lots"), "lots");
    }

    #[test]
    fn amounts_add_and_divide_exactly() {
        let a = parse("250m").unwrap();
        let b = parse("750m").unwrap();
        assert_eq!(a.saturating_add(b).canonical(Format::DecimalSi), "1");
        assert_eq!(parse("1.5").unwrap().div_ceil(Amount::ONE), 2);
        assert_eq!(parse("1Gi").unwrap().div_ceil(parse("1Mi").unwrap()), 1024);
        assert_eq!(parse("1u").unwrap().milli(), 1, "rounds up to a thousandth");
        assert!(parse("1.2.3").is_none());
    }
}
