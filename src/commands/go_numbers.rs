//! Floats as Go prints them, for output that must match kubectl's byte for byte.

/// A float as Go's encoding/json writes it: plain digits between 1e-6 and 1e21, otherwise
/// an exponent without a leading zero (`1e-7`, `1e+21`).
pub fn go_json_float(f: f64) -> String {
    let magnitude = f.abs();
    if magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude) {
        let text = go_exponent(&format!("{f:e}"));
        match text.split_once("e-0") {
            Some((mantissa, digit)) => format!("{mantissa}e-{digit}"),
            None => text,
        }
    } else {
        format!("{f}")
    }
}

/// Rust's `1.5e-7` as Go's `%e` writes it: a sign and at least two exponent digits.
pub fn go_exponent(rust: &str) -> String {
    let Some((mantissa, exponent)) = rust.split_once('e') else {
        return rust.to_string();
    };
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}
