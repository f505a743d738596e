//! Human units in scenario files and on the command line: rates such as
//! `1.5mbit` and durations such as `100ms`.

use crate::time::Duration;

/// Splits `"1.5mbit"` into `(1.5, "mbit")`; the error says what was wrong.
fn split_number(s: &str) -> Result<(f64, String), String> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` does not start with a number"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("`{s}` must not be negative"));
    }
    Ok((value, unit.trim().to_ascii_lowercase()))
}

/// Parses a rate in bits per second: a bare number, or with `bit`, `kbit`,
/// `mbit`, `gbit` (also `bps`, `kbps`, `mbps`, `gbps`). Zero is an error.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let (value, unit) = split_number(s)?;
    let scale = match unit.as_str() {
        "" | "bit" | "bps" | "b/s" => 1.0,
        "kbit" | "kbps" | "kb/s" => 1e3,
        "mbit" | "mbps" | "mb/s" => 1e6,
        "gbit" | "gbps" | "gb/s" => 1e9,
        other => {
            return Err(format!(
                "unknown rate unit `{other}` (use bit, kbit, mbit, gbit)"
            ))
        }
    };
    let bps = (value * scale).round();
    if bps < 1.0 {
        return Err(format!("rate `{s}` must be positive"));
    }
    if bps > 1e15 {
        return Err(format!("rate `{s}` is too large"));
    }
    Ok(bps as u64)
}

/// Parses a duration with a unit: `us`, `ms`, `s`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let (value, unit) = split_number(s)?;
    let nanos = match unit.as_str() {
        "us" => value * 1e3,
        "ms" => value * 1e6,
        "s" => value * 1e9,
        "min" => value * 60e9,
        "h" => value * 3600e9,
        "" => return Err(format!("`{s}` needs a unit (us, ms, s, min, h)")),
        other => {
            return Err(format!(
                "unknown time unit `{other}` (use us, ms, s, min, h)"
            ))
        }
    };
    if nanos > 1e18 {
        return Err(format!("`{s}` is too long"));
    }
    Ok(Duration::from_nanos(nanos.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1.5mbit"), Ok(1_500_000));
        assert_eq!(parse_rate("64 kbit"), Ok(64_000));
        assert_eq!(parse_rate("10Gbps"), Ok(10_000_000_000));
        assert_eq!(parse_rate("300000"), Ok(300_000));
        assert!(parse_rate("0mbit").unwrap_err().contains("positive"));
        assert!(parse_rate("-1mbit").unwrap_err().contains("negative"));
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("3 furlongs").unwrap_err().contains("unit"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("24h"), Ok(Duration::from_secs(86_400)));
        assert!(parse_duration("100").unwrap_err().contains("unit"));
        assert!(parse_duration("-5ms").is_err());
    }
}
