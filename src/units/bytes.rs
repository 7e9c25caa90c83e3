//! Byte counts as a person reads them in a terminal cell.

/// `512B`, `1.5KiB`, `12.0MiB`: binary units, one decimal, no space (a table cell or the
/// header's recording size).
pub fn binary(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes}B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1}{}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::binary;

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(binary(0), "0B");
        assert_eq!(binary(1023), "1023B");
        assert_eq!(binary(1536), "1.5KiB");
        assert_eq!(binary(100 * 1024 * 1024), "100.0MiB");
        assert_eq!(binary(3 << 40), "3.0TiB");
    }
}
