//! Readable, time-ordered identifiers: `mc_20261122t064722_k3q9x2abzr7m`.
//!
//! The prefix names the kind of row, the UTC second makes ids sort by creation time and
//! read as a date, and 60 random bits (12 base32 characters) make collisions negligible
//! (the primary key would refuse one anyway).

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Builds an id from a prefix, seconds since the Unix epoch and 8 random bytes.
pub fn make_id(prefix: &str, unix_seconds: i64, random: [u8; 8]) -> String {
    let (y, mo, d, h, mi, s) = civil_from_unix(unix_seconds);
    let mut out = String::with_capacity(prefix.len() + 29);
    out.push_str(prefix);
    out.push('_');
    out.push_str(&format!("{y:04}{mo:02}{d:02}t{h:02}{mi:02}{s:02}_"));
    let mut bits = u64::from_be_bytes(random);
    for _ in 0..12 {
        out.push(ALPHABET[(bits & 31) as usize] as char);
        bits >>= 5;
    }
    out
}

/// Converts Unix seconds to a UTC civil date and time (Howard Hinnant's algorithm).
fn civil_from_unix(t: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400) as u32;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_date_and_random_part() {
        // 2026-11-22 06:47:22 UTC
        let id = make_id("mc", 1_795_330_042, [0; 8]);
        assert_eq!(id, "mc_20261122t064722_000000000000");
        let id = make_id("pm", 0, [0xff; 8]);
        assert!(id.starts_with("pm_19700101t000000_"));
        assert_eq!(id.len(), "pm_19700101t000000_".len() + 12);
    }

    #[test]
    fn leap_days_and_centuries() {
        assert_eq!(civil_from_unix(951_782_400), (2000, 2, 29, 0, 0, 0));
        assert_eq!(civil_from_unix(4_107_542_400), (2100, 3, 1, 0, 0, 0));
        assert_eq!(civil_from_unix(-1), (1969, 12, 31, 23, 59, 59));
    }

    #[test]
    fn random_bytes_change_the_id() {
        assert_ne!(make_id("mc", 5, [1; 8]), make_id("mc", 5, [2; 8]));
    }
}
