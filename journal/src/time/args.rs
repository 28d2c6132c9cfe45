//! Time and duration arguments as an operator types them (`--since 24h`,
//! `--older-than 7d`, a date in local time), and durations printed back.

use super::*;

/// The forms a time argument (`--since`, `--until` and the like) takes, as
/// its refusal names them.
pub const WHEN_FORMS: &str = "give RFC 3339 (2026-11-30T18:00:00Z), a date (2026-11-30: local midnight), a date and time with T or a space, to the minute or the second (2026-11-30 18:00, 2026-11-30T18:00:05.5: local time unless a zone follows, as Z, +01:00 or UTC), or a span ago (90m, 24h, 7d, 2w)";

/// The forms a duration argument (`--hold` and the like) takes.
pub const DURATION_FORMS: &str = "give Go's duration syntax, as 300ms, 90s, 1.5h, 2h45m or 7d (units ns, us, µs, ms, s, m, h, d; 0 alone needs none)";

/// Why a time or duration argument was refused: the whole sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError(pub String);

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgError {}

impl Time {
    /// The instant `ns` nanoseconds from the Unix epoch, written with
    /// `offset` (seconds east of UTC); `None` out of range.
    fn from_unix_nanos(ns: i128, offset: i32) -> Option<Time> {
        let unix = i64::try_from(ns.div_euclid(1_000_000_000)).ok()?;
        let nanos = u32::try_from(ns.rem_euclid(1_000_000_000)).ok()?;
        Some(Time {
            unix,
            nanos,
            offset,
        })
    }

    fn unix_nanos(&self) -> i128 {
        i128::from(self.unix) * 1_000_000_000 + i128::from(self.nanos)
    }

    /// This instant less `d`, with the same offset; `None` out of range.
    pub fn checked_sub(&self, d: std::time::Duration) -> Option<Time> {
        let ns = self
            .unix_nanos()
            .checked_sub(i128::try_from(d.as_nanos()).ok()?)?;
        Time::from_unix_nanos(ns, self.offset)
    }

    /// For a table: RFC 3339 to the second with the offset the time was
    /// written with (`2026-09-22T14:44:03+05:30`, `2026-11-30T17:01:00Z`),
    /// a form every time argument reads back.
    pub fn to_rfc3339_seconds(&self) -> String {
        let whole = Time { nanos: 0, ..*self };
        whole.to_rfc3339()
    }
}

/// A time argument, read against now and the local time zone (`TZ`, else
/// the system's): see [`parse_when_in`].
/// # Examples
///
/// ```
/// use journal::time::parse_when;
///
/// let t = parse_when("2026-11-30T18:00:00Z")?;
/// assert_eq!(t.to_rfc3339(), "2026-11-30T18:00:00Z");
/// // A span counts back from now.
/// assert!(parse_when("90m")? < parse_when("1m")?);
/// assert!(parse_when("yesterday-ish").is_err());
/// # Ok::<(), journal::time::ArgError>(())
/// ```
pub fn parse_when(s: &str) -> Result<Time, ArgError> {
    parse_when_in(s, Time::now(), &jiff::tz::TimeZone::system())
}

/// A time argument: RFC 3339 as Go reads it; a date (midnight in `tz`); a
/// date and a time joined by `T` or a space, to the minute or the second
/// with an optional fraction of up to nine digits, in `tz` unless a zone
/// follows (`Z`, `±HH:MM`, `±HHMM`, `±HH`, or after a space a zone name such
/// as `UTC` or `Europe/Paris`), as `journalctl --since` reads it; or a span
/// counted back from `now` (Go's duration syntax with `d` for 24 hours and
/// `w` for 7 days, as the agent's `fisk.ParseDuration` counts them).
/// Anything else is refused with [`WHEN_FORMS`]: nothing is read in part.
/// A local time a clock change skips is read as the later instant, one it
/// repeats as the earlier (jiff's compatible rule, as Temporal's).
pub fn parse_when_in(s: &str, now: Time, tz: &jiff::tz::TimeZone) -> Result<Time, ArgError> {
    let bad = |why: &str| ArgError(format!("{s:?} is not a time{why}: {WHEN_FORMS}"));
    if let Ok(t) = Time::parse(s) {
        return Ok(t);
    }
    let b = s.as_bytes();
    let dated = b.len() >= 5 && b.iter().take(4).all(u8::is_ascii_digit) && b.get(4) == Some(&b'-');
    if dated {
        return civil(s, tz).map_err(|why| bad(&format!(" ({why})")));
    }
    let span = parse_span(s, true).map_err(|_| bad(""))?;
    now.checked_sub(span)
        .ok_or_else(|| bad(" (that is before the year 1)"))
}

/// `DATE[(T| )HH:MM[:SS[.F]][ZONE]]` in `tz` unless a zone is given.
fn civil(s: &str, tz: &jiff::tz::TimeZone) -> Result<Time, String> {
    use jiff::civil::{Date, DateTime, Time as Clock};
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i32> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i32, |acc, d| {
            d.is_ascii_digit().then(|| acc * 10 + i32::from(d - b'0'))
        })
    };
    let field = |from, len, what: &str| num(from, len).ok_or_else(|| format!("no {what}"));
    if b.get(7) != Some(&b'-') {
        return Err("a date is YYYY-MM-DD".into());
    }
    let (y, mo, d) = (
        field(0, 4, "year")?,
        field(5, 2, "month")?,
        field(8, 2, "day")?,
    );
    let small = |v: i32| i8::try_from(v).map_err(|_| "out of range".to_owned());
    let date = Date::new(
        i16::try_from(y).map_err(|_| "out of range")?,
        small(mo)?,
        small(d)?,
    )
    .map_err(|_| format!("{y:04}-{mo:02}-{d:02} is not a date"))?;
    let mut i = 10;
    let mut clock = Clock::midnight();
    match b.get(i) {
        None => {}
        Some(b'T' | b' ') => {
            let h = field(i + 1, 2, "hour (HH:MM)")?;
            if b.get(i + 3) != Some(&b':') {
                return Err("a time is HH:MM or HH:MM:SS".into());
            }
            let m = field(i + 4, 2, "minute")?;
            i += 6;
            let mut sec = 0;
            let mut nanos = 0i32;
            if b.get(i) == Some(&b':') {
                sec = field(i + 1, 2, "second")?;
                i += 3;
                if b.get(i) == Some(&b'.') {
                    let start = i + 1;
                    let mut end = start;
                    while b.get(end).is_some_and(u8::is_ascii_digit) {
                        end += 1;
                    }
                    if end == start || end - start > 9 {
                        return Err("a fraction of a second is 1 to 9 digits".into());
                    }
                    let mut scale = 100_000_000;
                    for c in b.get(start..end).unwrap_or_default() {
                        nanos += i32::from(c - b'0') * scale;
                        scale /= 10;
                    }
                    i = end;
                }
            }
            clock = Clock::new(small(h)?, small(m)?, small(sec)?, nanos)
                .map_err(|_| format!("{h:02}:{m:02}:{sec:02} is not a time of day"))?;
        }
        Some(_) => return Err("a date and a time are joined by T or a space".into()),
    }
    let at = DateTime::from_parts(date, clock);
    let rest = s.get(i..).unwrap_or_default();
    let zoned = match zone(rest)? {
        None => at.to_zoned(tz.clone()),
        Some(z) => at.to_zoned(z),
    }
    .map_err(|e| e.to_string())?;
    let ts = zoned.timestamp();
    Time::from_unix_nanos(ts.as_nanosecond(), zoned.offset().seconds())
        .ok_or_else(|| "out of range".to_owned())
}

/// The zone after a date and time: `None` for none (local time).
fn zone(rest: &str) -> Result<Option<jiff::tz::TimeZone>, String> {
    use jiff::tz::{Offset, TimeZone};
    if rest.is_empty() {
        return Ok(None);
    }
    let (spaced, z) = match rest.strip_prefix(' ') {
        Some(z) => (true, z),
        None => (false, rest),
    };
    let b = z.as_bytes();
    let two = |i: usize| -> Option<i32> {
        let (a, c) = (*b.get(i)?, *b.get(i + 1)?);
        (a.is_ascii_digit() && c.is_ascii_digit())
            .then(|| i32::from(a - b'0') * 10 + i32::from(c - b'0'))
    };
    let offset = match b.first() {
        Some(b'Z') if b.len() == 1 => Some(0),
        Some(sign @ (b'+' | b'-')) => {
            let (h, m) = match b.len() {
                3 => (two(1), Some(0)),
                5 => (two(1), two(3)),
                6 if b.get(3) == Some(&b':') => (two(1), two(4)),
                _ => (None, None),
            };
            match (h, m) {
                (Some(h), Some(m)) if h <= 23 && m <= 59 => {
                    let secs = (h * 60 + m) * 60;
                    Some(if *sign == b'-' { -secs } else { secs })
                }
                _ => return Err(format!("{z:?} is not an offset (+01:00, +0100, +01)")),
            }
        }
        _ => None,
    };
    if let Some(secs) = offset {
        let off = Offset::from_seconds(secs).map_err(|e| e.to_string())?;
        return Ok(Some(TimeZone::fixed(off)));
    }
    if !spaced {
        return Err(format!("{rest:?} after the time is not a zone"));
    }
    if z == "UTC" || z == "GMT" {
        return Ok(Some(TimeZone::UTC));
    }
    TimeZone::get(z)
        .map(Some)
        .map_err(|_| format!("{z:?} is not a time zone this system knows"))
}

/// A duration argument: Go's `time.ParseDuration` syntax (as the agent's
/// `hold` setting reads it) plus `d` for 24 hours. A negative one is refused,
/// and so is a bare number other than `0` (Go refuses it too: a number
/// without a unit is not seconds).
/// # Examples
///
/// ```
/// use journal::time::{format_duration, parse_duration};
/// use std::time::Duration;
///
/// assert_eq!(parse_duration("1h30m")?, Duration::from_secs(5400));
/// assert_eq!(parse_duration("2d")?, Duration::from_secs(2 * 86_400));
/// assert!(parse_duration("90").is_err(), "a number needs a unit");
/// assert!(parse_duration("-5s").is_err());
/// assert_eq!(format_duration(Duration::from_secs(600)), "600s");
/// # Ok::<(), journal::time::ArgError>(())
/// ```
pub fn parse_duration(s: &str) -> Result<std::time::Duration, ArgError> {
    parse_span(s, false).map_err(|why| ArgError(format!("{s:?} {why}")))
}

/// `d` as a duration argument that [`parse_duration`] reads back exactly:
/// `600s`, `0.25s`, `1.000000001s`.
pub fn format_duration(d: std::time::Duration) -> String {
    match d.subsec_nanos() {
        0 => format!("{}s", d.as_secs()),
        n => {
            let frac = format!("{n:09}");
            format!("{}.{}s", d.as_secs(), frac.trim_end_matches('0'))
        }
    }
}

/// Go's `time.ParseDuration`, step for step, with `d` (and `w` when
/// `weeks`) added and a negative result refused. The error completes the
/// sentence `"<arg>" ...`.
fn parse_span(orig: &str, weeks: bool) -> Result<std::time::Duration, String> {
    const MAX: u64 = 1 << 63;
    let invalid = || format!("is not a duration: {DURATION_FORMS}");
    let mut s = orig;
    if let Some(rest) = s.strip_prefix('-') {
        if rest == "0" || parse_span(rest, weeks).is_ok() {
            return Err(
                "is negative: a duration here counts from now or for how long, never back".into(),
            );
        }
        return Err(invalid());
    }
    s = s.strip_prefix('+').unwrap_or(s);
    if s == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    if s.bytes().all(|c| c.is_ascii_digit() || c == b'.') && s.bytes().any(|c| c.is_ascii_digit()) {
        return Err(format!(
            "has no unit: say which, as {s}s, {s}m or {s}h (only 0 needs none)"
        ));
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !b.first().is_some_and(|c| *c == b'.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        // [0-9]*
        let mut v: u64 = 0;
        let mut i = 0;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if v > MAX / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(c - b'0');
            if v > MAX {
                return Err(invalid());
            }
            i += 1;
        }
        let pre = i > 0;
        // (\.[0-9]*)?
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if b.get(i) == Some(&b'.') {
            i += 1;
            let mut overflow = false;
            while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
                i += 1;
                post = true;
                if overflow {
                    continue;
                }
                if f > (MAX - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(c - b'0');
                if y > MAX {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
        }
        if !pre && !post {
            return Err(invalid());
        }
        // The unit: everything up to the next digit or period.
        let rest = s.get(i..).unwrap_or_default();
        let end = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (u, tail) = rest.split_at(end);
        let unit: u64 = match u {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "d" => 86_400_000_000_000,
            "w" if weeks => 604_800_000_000_000,
            "" => return Err(format!("has a number without a unit: {DURATION_FORMS}")),
            _ => return Err(format!("has an unknown unit {u:?}: {DURATION_FORMS}")),
        };
        s = tail;
        if v > MAX / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            // As Go: float64 keeps fractions of an hour nanosecond-exact.
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > MAX {
                return Err(invalid());
            }
        }
        total = match total.checked_add(v) {
            Some(t) if t <= MAX => t,
            _ => return Err(invalid()),
        };
    }
    if total > MAX - 1 {
        return Err(invalid());
    }
    Ok(std::time::Duration::from_nanos(total))
}

#[cfg(test)]
mod arg_tests {
    use super::*;
    use jiff::tz::TimeZone;
    use std::time::Duration;

    const NOW: &str = "2026-12-01T12:00:00Z";

    fn at(s: &str, tz: &str) -> Result<String, String> {
        let now = Time::parse(NOW).unwrap();
        let tz = TimeZone::get(tz).unwrap();
        parse_when_in(s, now, &tz)
            .map(|t| t.to_rfc3339())
            .map_err(|e| e.0)
    }

    /// Compared as instants, printed as RFC 3339 in UTC.
    fn utc(s: &str, tz: &str) -> Result<String, String> {
        at(s, tz).map(|t| {
            let t = Time::parse(&t).unwrap();
            Time::from_unix_nanos(t.unix_nanos(), 0)
                .unwrap()
                .to_rfc3339()
        })
    }

    #[test]
    fn rfc3339_is_read_as_go_reads_it_whatever_the_local_zone() {
        for tz in ["UTC", "Europe/Paris", "America/New_York"] {
            assert_eq!(
                at("2026-11-30T18:00:00Z", tz).as_deref(),
                Ok("2026-11-30T18:00:00Z")
            );
            assert_eq!(
                at("2026-09-22T14:44:03.123456789+05:30", tz).as_deref(),
                Ok("2026-09-22T14:44:03.123456789+05:30")
            );
        }
    }

    #[test]
    fn a_date_is_local_midnight() {
        assert_eq!(
            utc("2026-11-30", "UTC").as_deref(),
            Ok("2026-11-30T00:00:00Z")
        );
        assert_eq!(
            utc("2026-11-30", "Europe/Paris").as_deref(),
            Ok("2026-11-29T23:00:00Z")
        );
        // Summer time: Paris is two hours ahead.
        assert_eq!(
            utc("2026-07-01", "Europe/Paris").as_deref(),
            Ok("2026-06-30T22:00:00Z")
        );
        assert_eq!(
            utc("2026-11-30", "America/New_York").as_deref(),
            Ok("2026-11-30T05:00:00Z")
        );
    }

    #[test]
    fn a_date_and_time_is_local_to_the_minute_or_second_never_cut_to_midnight() {
        // The issue's case: 18:00 is 18:00, with T or a space, minutes or seconds.
        for s in [
            "2026-11-30 18:00",
            "2026-11-30T18:00",
            "2026-11-30T18:00:00",
            "2026-11-30 18:00:00",
            "2026-11-30 18:00:00.0",
        ] {
            assert_eq!(utc(s, "UTC").as_deref(), Ok("2026-11-30T18:00:00Z"), "{s}");
            assert_eq!(
                utc(s, "Europe/Paris").as_deref(),
                Ok("2026-11-30T17:00:00Z"),
                "{s}"
            );
        }
        assert_eq!(
            utc("2026-11-30 18:00:05.25", "America/New_York").as_deref(),
            Ok("2026-11-30T23:00:05.25Z")
        );
        assert_eq!(
            utc("2026-11-30T18:00:05.123456789", "UTC").as_deref(),
            Ok("2026-11-30T18:00:05.123456789Z")
        );
    }

    #[test]
    fn a_zone_after_the_time_wins_over_the_local_one() {
        for (s, want) in [
            ("2026-11-30T18:00Z", "2026-11-30T18:00:00Z"),
            ("2026-11-30 18:00Z", "2026-11-30T18:00:00Z"),
            ("2026-11-30 18:00:00Z", "2026-11-30T18:00:00Z"),
            ("2026-11-30 18:00 Z", "2026-11-30T18:00:00Z"),
            ("2026-11-30T18:00+01:00", "2026-11-30T17:00:00Z"),
            ("2026-11-30 18:00 +0100", "2026-11-30T17:00:00Z"),
            ("2026-11-30T18:00-05", "2026-11-30T23:00:00Z"),
            ("2026-11-30 18:00 UTC", "2026-11-30T18:00:00Z"),
            ("2026-11-30 18:00:00 Europe/Paris", "2026-11-30T17:00:00Z"),
            (
                "2026-11-30T18:00:00 America/New_York",
                "2026-11-30T23:00:00Z",
            ),
        ] {
            assert_eq!(utc(s, "Asia/Tokyo").as_deref(), Ok(want), "{s}");
        }
    }

    #[test]
    fn a_span_counts_back_from_now_in_go_units_with_days_and_weeks() {
        for (s, want) in [
            ("90m", "2026-12-01T10:30:00Z"),
            ("24h", "2026-11-30T12:00:00Z"),
            ("7d", "2026-11-24T12:00:00Z"),
            ("2w", "2026-11-17T12:00:00Z"),
            ("1.5h", "2026-12-01T10:30:00Z"),
            ("2h45m", "2026-12-01T09:15:00Z"),
            ("500ms", "2026-12-01T11:59:59.5Z"),
            ("0", "2026-12-01T12:00:00Z"),
        ] {
            // Days are 24 hours, whatever summer time does locally.
            assert_eq!(at(s, "Europe/Paris").as_deref(), Ok(want), "{s}");
        }
    }

    #[test]
    fn anything_else_is_refused_naming_every_form() {
        for bad in [
            "",
            "yesterday",
            "-3h",
            "10",
            "2026-13-01",
            "2026-02-30",
            "2026-11-30 18",
            "2026-11-30 18:0",
            "2026-11-30 1800",
            "2026-11-30T24:00",
            "2026-11-30 18:60",
            "2026-11-30 18:00:60",
            "2026-11-30 18:00:00.",
            "2026-11-30 18:00:00.1234567890",
            "2026-11-30t18:00",
            "2026-11-30_18:00",
            "2026-11-30 18:00 Nowhere/City",
            "2026-11-30 18:00+25:00",
            "2026-11-30 18:00 junk",
            "2026-11-30 18:00x",
            "2026-11-30 18:00.5",
            "2026-1-30",
            "1h 30m",
            "3y",
        ] {
            let e = at(bad, "UTC").unwrap_err();
            assert!(e.contains("is not a time"), "{bad}: {e}");
            assert!(
                e.contains("RFC 3339")
                    && e.contains("local midnight")
                    && e.contains("2026-11-30 18:00")
                    && e.contains("unless a zone")
                    && e.contains("7d"),
                "{bad}: {e}"
            );
        }
    }

    const NS: u64 = 1;
    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;
    const M: u64 = 60 * S;
    const H: u64 = 60 * M;

    #[test]
    fn durations_read_as_go_parse_duration_reads_its_own_examples() {
        // Go's time package: the ParseDuration documentation and its
        // parseDurationTests (the non-negative ones).
        for (s, ns) in [
            ("300ms", 300 * MS),
            ("2h45m", 2 * H + 45 * M),
            ("1.5h", H + 30 * M),
            ("10h", 10 * H),
            ("1h10m10s", H + 10 * M + 10 * S),
            ("1µs", US),
            ("1us", US),
            ("0", 0),
            ("5s", 5 * S),
            ("30s", 30 * S),
            ("1478s", 1478 * S),
            ("+5s", 5 * S),
            ("+0", 0),
            ("5.0s", 5 * S),
            ("5.6s", 5 * S + 600 * MS),
            ("5.s", 5 * S),
            (".5s", 500 * MS),
            ("1.0s", S),
            ("1.00s", S),
            ("1.004s", S + 4 * MS),
            ("1.0040s", S + 4 * MS),
            ("100.00100s", 100 * S + MS),
            ("10ns", 10 * NS),
            ("11us", 11 * US),
            ("12µs", 12 * US),
            ("12μs", 12 * US),
            ("13ms", 13 * MS),
            ("14s", 14 * S),
            ("15m", 15 * M),
            ("16h", 16 * H),
            ("3h30m", 3 * H + 30 * M),
            ("10.5s4m", 4 * M + 10 * S + 500 * MS),
            (
                "1h2m3s4ms5us6ns",
                H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS,
            ),
            ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
            ("52763797000ns", 52_763_797_000 * NS),
            ("0.3333333333333333333h", 20 * M),
            ("9007199254740993ns", (1 << 53) + 1),
            ("9223372036854775807ns", (1 << 63) - 1),
            ("9223372036854775.807us", (1 << 63) - 1),
            ("9223372036s854ms775us807ns", (1 << 63) - 1),
            ("0.100000000000000000000h", 6 * M),
            (
                "0.830103483285477580700h",
                49 * M + 48 * S + 372_539_827 * NS,
            ),
            // Beyond Go: days.
            ("7d", 7 * 24 * H),
            ("1d12h", 36 * H),
            ("1.5d", 36 * H),
        ] {
            assert_eq!(parse_duration(s), Ok(Duration::from_nanos(ns)), "{s}");
        }
    }

    #[test]
    fn durations_go_refuses_a_bare_number_and_a_negative_one_are_refused() {
        for (bad, says) in [
            ("", "is not a duration"),
            ("3", "has no unit"),
            ("10", "has no unit: say which, as 10s, 10m or 10h"),
            ("1.5", "has no unit"),
            ("-", "is not a duration"),
            ("s", "is not a duration"),
            (".", "is not a duration"),
            ("-.", "is not a duration"),
            (".s", "is not a duration"),
            ("+.s", "is not a duration"),
            ("1h30", "without a unit"),
            ("1x", "unknown unit \"x\""),
            ("2w", "unknown unit \"w\""),
            ("1h 30m", "unknown unit \"h \""),
            ("\u{85}\u{85}", "is not a duration"),
            ("9223372036854775808ns", "is not a duration"),
            ("9223372036854775.808us", "is not a duration"),
            ("9223372036s854ms775us808ns", "is not a duration"),
            ("106752d", "is not a duration"),
            ("-5s", "is negative"),
            ("-1.5h", "is negative"),
            ("-2m3.4s", "is negative"),
            ("-0", "is negative"),
        ] {
            let e = parse_duration(bad).unwrap_err().0;
            assert!(e.starts_with(&format!("{bad:?} ")), "{bad}: {e}");
            assert!(e.contains(says), "{bad}: {e}");
        }
        let e = parse_duration("x").unwrap_err().0;
        assert!(
            e.contains("300ms") && e.contains("2h45m") && e.contains("units ns"),
            "{e}"
        );
    }

    #[test]
    fn a_formatted_duration_reads_back_exactly() {
        for ns in [
            0,
            1,
            500 * MS,
            600 * S,
            10 * M + 1,
            90 * S + 250 * MS,
            (1 << 63) - 1,
        ] {
            let d = Duration::from_nanos(ns);
            assert_eq!(
                parse_duration(&format_duration(d)),
                Ok(d),
                "{}",
                format_duration(d)
            );
        }
        assert_eq!(format_duration(Duration::from_secs(600)), "600s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn a_table_time_is_to_the_second_with_its_zone() {
        let t = |s: &str| Time::parse(s).unwrap().to_rfc3339_seconds();
        assert_eq!(
            t("2026-09-22T14:44:03.123456789+05:30"),
            "2026-09-22T14:44:03+05:30"
        );
        assert_eq!(t("2026-11-30T17:01:00.9Z"), "2026-11-30T17:01:00Z");
        assert_eq!(t("2026-11-30T17:01:00-07:00"), "2026-11-30T17:01:00-07:00");
    }
}
