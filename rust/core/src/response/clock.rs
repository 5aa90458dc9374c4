//! Creation times: canonical timestamps (RFC 3339, UTC) to and from the providers' fields
//! (`created` / `created_at` as Unix seconds, Ollama's `created_at` as RFC 3339), and now.

use std::time::{SystemTime, UNIX_EPOCH};

/// An RFC 3339 time: whole seconds since the Unix epoch and the fraction's digits, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Time<'a> {
    pub seconds: i64,
    pub fraction: &'a str,
}

/// Read `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`; `None` for anything else.
pub(super) fn parse(text: &str) -> Option<Time<'_>> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month) || !(1..=days_in_month(year, month)).contains(&day) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let rest = &text[19..];
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(tail) => {
            let n = tail.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            (&tail[..n], &tail[n..])
        }
        None => ("", rest),
    };
    let offset = match zone.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (digits_of(&zone[1..3])?, digits_of(&zone[4..6])?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return None,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second - offset * 60;
    Some(Time { seconds, fraction })
}

fn digits_of(text: &str) -> Option<i64> {
    text.bytes().all(|c| c.is_ascii_digit()).then(|| text.parse().ok())?
}

/// The time as RFC 3339 in UTC (`2026-11-21T10:00:00Z`, or with the fraction's digits), for
/// years 1 to 9999 (what Python's `datetime` holds); `None` outside them.
pub(super) fn format(seconds: i64, fraction: &str) -> Option<String> {
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    if !(1..=9999).contains(&year) {
        return None;
    }
    let (hour, minute, second) = (of_day / 3_600, of_day % 3_600 / 60, of_day % 60);
    // by hand, into a template: `format!` with paddings cost more than the rest of a small
    // response's read, and pushing digit by digit a tenth of it
    let mut date = *b"0000-00-00T00:00:00";
    for (value, end) in [(year, 4), (month, 7), (day, 10), (hour, 13), (minute, 16), (second, 19)] {
        put_digits(&mut date[..end], value);
    }
    let mut out = String::with_capacity(21 + fraction.len());
    out.push_str(std::str::from_utf8(&date).ok()?);
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    out.push('Z');
    Some(out)
}

/// `value` (0 or more) written right-aligned over the digits that end `slot` (two, or four for
/// the year: the template's zeros are the padding).
fn put_digits(slot: &mut [u8], mut value: i64) {
    for byte in slot.iter_mut().rev().take_while(|b| b.is_ascii_digit()) {
        *byte = b'0' + u8::try_from(value % 10).unwrap_or(0);
        value /= 10;
    }
}

/// `value` (0 or more) as `digits` decimal digits, zero-padded.
fn push_digits(out: &mut String, value: i64, digits: u32) {
    for place in (0..digits).rev() {
        let digit = value / 10_i64.pow(place) % 10;
        out.push(char::from(b'0' + u8::try_from(digit).unwrap_or(0)));
    }
}

/// Now, as RFC 3339 in UTC with microseconds (as Python's `datetime` holds it).
pub(super) fn now() -> String {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(0);
    let mut micros = String::with_capacity(6);
    push_digits(&mut micros, i64::from(since.subsec_micros()), 6);
    format(seconds, &micros).unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_rfc3339() {
        let t = parse("2025-08-08T21:35:29Z").expect("reads");
        assert_eq!(t, Time { seconds: 1_754_688_929, fraction: "" });
        assert_eq!(format(t.seconds, t.fraction).as_deref(), Some("2025-08-08T21:35:29Z"));
        let t = parse("2023-12-12T16:13:43.416799123+02:00").expect("reads");
        assert_eq!(format(t.seconds, t.fraction).as_deref(), Some("2023-12-12T14:13:43.416799123Z"));
        assert_eq!(parse("2000-02-29T23:59:59Z").map(|t| t.seconds), Some(951_868_799));
        assert_eq!(parse("1969-12-31T23:59:59Z").map(|t| t.seconds), Some(-1));
        assert_eq!(format(-1, "").as_deref(), Some("1969-12-31T23:59:59Z"));
        assert_eq!(format(0, "5").as_deref(), Some("1970-01-01T00:00:00.5Z"));
        assert_eq!(format(253_402_300_799, "").as_deref(), Some("9999-12-31T23:59:59Z"));
        assert_eq!(format(-62_135_596_800, "").as_deref(), Some("0001-01-01T00:00:00Z"));
        assert_eq!(format(253_402_300_800, ""), None);
        let now = now();
        let read = parse(&now).expect("now reads back");
        assert_eq!((now.len(), read.fraction.len()), (27, 6), "{now}");
        assert!(read.seconds > 1_700_000_000, "{now}");
    }

    #[test]
    fn refuses_what_is_not_a_time() {
        for text in [
            "",
            "not a time",
            "2025-02-30T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-01-01T24:00:00Z",
            "2025-01-01T00:00:00",
            "2025-01-01T00:00:00.Z",
            "2025-01-01T00:00:00+0100",
            "+025-01-01T00:00:00Z",
            "2025-01-01T00:00:00Zjunk",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
        assert_eq!(format(i64::MAX / 2, ""), None);
        assert_eq!(format(-62_135_596_801, ""), None, "year 0");
        assert_eq!(format(253_402_300_799, "").as_deref(), Some("9999-12-31T23:59:59Z"));
    }
}
