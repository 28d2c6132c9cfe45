//! Times as Go's `time.Time` reads and writes them in a journal: strict
//! RFC 3339 in, `time.RFC3339Nano` out, compared as instants; and "now" for
//! the records and backup names this tool writes.
//!
//! Public API: front ends read times ([`Time`]), parse time and duration
//! arguments ([`parse_when`], [`parse_duration`]) and print durations
//! ([`format_duration`]); the compact file-name stamp stays inside the crate.

use std::time::{SystemTime, UNIX_EPOCH};

mod args;

pub use args::{
    format_duration, parse_duration, parse_when, parse_when_in, ArgError, DURATION_FORMS,
    WHEN_FORMS,
};

/// Days since 1970-01-01 to (year, month, day); Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A UTC timestamp for file names: `20231114T221320.120000000Z` (no
/// colons, sorts by time).
pub(crate) fn compact(t: SystemTime) -> String {
    let (secs, nanos) = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_nanos()),
        Err(_) => (0, 0),
    };
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}{mo:02}{d:02}T{:02}{:02}{:02}.{nanos:09}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_like_go_rfc3339nano() {
        let t = UNIX_EPOCH + Duration::new(1_700_000_000, 120_000_000);
        let format = |t| Time::from_system(t).to_rfc3339();
        assert_eq!(format(t), "2023-11-14T22:13:20.12Z");
        assert_eq!(format(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(format(leap), "2000-02-29T00:00:00Z");
        assert_eq!(compact(t), "20231114T221320.120000000Z");
    }
}

/// Days from 1970-01-01 to (year, month, day): the inverse of
/// [`civil_from_days`].
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// Seconds from 0001-01-01T00:00:00Z to the Unix epoch: Go's zero time.
const ZERO_UNIX: i64 = -62_135_596_800;

/// An instant as Go's `time.Time` holds it in a journal: when, and the UTC
/// offset it was written with (kept so a record re-encodes as written).
/// Equality and order are by instant, never by offset or text.
#[derive(Clone, Copy, Debug)]
pub struct Time {
    unix: i64,
    nanos: u32,
    /// Seconds east of UTC.
    offset: i32,
}

impl PartialEq for Time {
    fn eq(&self, o: &Self) -> bool {
        (self.unix, self.nanos) == (o.unix, o.nanos)
    }
}
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Time {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.unix, self.nanos).cmp(&(o.unix, o.nanos))
    }
}

impl Default for Time {
    /// Go's zero time, `0001-01-01T00:00:00Z`.
    fn default() -> Time {
        Time::ZERO
    }
}

/// Why a string is not a time Go's `time.Time` would read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeError(pub String);

impl std::fmt::Display for TimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{:?} is not an RFC 3339 time", self.0)
    }
}

impl Time {
    /// Go's zero time, 0001-01-01T00:00:00Z: what a journal writes for no time.
    pub const ZERO: Time = Time {
        unix: ZERO_UNIX,
        nanos: 0,
        offset: 0,
    };

    /// Go's `IsZero`: the instant 0001-01-01T00:00:00Z, whatever the offset.
    pub fn is_zero(&self) -> bool {
        self.unix == ZERO_UNIX && self.nanos == 0
    }

    /// The instant `t`, in UTC.
    pub fn from_system(t: SystemTime) -> Time {
        let (unix, nanos) = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => (
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                d.subsec_nanos(),
            ),
            Err(e) => (
                -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
                0,
            ),
        };
        Time {
            unix,
            nanos,
            offset: 0,
        }
    }

    /// The current instant, in UTC.
    pub fn now() -> Time {
        Time::from_system(SystemTime::now())
    }

    /// The instant as a `SystemTime` (for file times and ages).
    pub fn to_system(self) -> SystemTime {
        if self.unix >= 0 {
            UNIX_EPOCH + std::time::Duration::new(self.unix.unsigned_abs(), self.nanos)
        } else {
            UNIX_EPOCH - std::time::Duration::from_secs(self.unix.unsigned_abs())
                + std::time::Duration::from_nanos(u64::from(self.nanos))
        }
    }

    /// Nanoseconds from `earlier` to this instant, 0 when it is not later.
    pub fn nanos_since(&self, earlier: &Time) -> u128 {
        let ns = |t: &Time| i128::from(t.unix) * 1_000_000_000 + i128::from(t.nanos);
        u128::try_from(ns(self) - ns(earlier)).unwrap_or(0)
    }

    /// Seconds and nanoseconds since the Unix epoch.
    pub fn unix(&self) -> (i64, u32) {
        (self.unix, self.nanos)
    }

    /// Parse the bytes of a JSON string's contents (between the quotes,
    /// unescaped: Go's `Time.UnmarshalJSON` does not unescape either) as
    /// Go's strict RFC 3339 parser does: `YYYY-MM-DDTHH:MM:SS`, an optional
    /// `.` and digits, then `Z` or `±HH:MM`, every field in range.
    pub fn parse(s: &str) -> Result<Time, TimeError> {
        let bad = || TimeError(s.to_owned());
        let b = s.as_bytes();
        let num = |from: usize, len: usize| -> Option<i64> {
            let digits = b.get(from..from + len)?;
            digits.iter().try_fold(0i64, |acc, d| {
                d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
            })
        };
        let at = |i: usize, c: u8| b.get(i) == Some(&c);
        if b.len() < 20
            || !(at(4, b'-') && at(7, b'-') && at(10, b'T') && at(13, b':') && at(16, b':'))
        {
            return Err(bad());
        }
        let year = num(0, 4).ok_or_else(bad)?;
        let month = u32::try_from(num(5, 2).ok_or_else(bad)?).map_err(|_| bad())?;
        let day = u32::try_from(num(8, 2).ok_or_else(bad)?).map_err(|_| bad())?;
        let hour = num(11, 2).ok_or_else(bad)?;
        let minute = num(14, 2).ok_or_else(bad)?;
        let second = num(17, 2).ok_or_else(bad)?;
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 59
        {
            return Err(bad());
        }
        let mut i = 19;
        let mut nanos: u32 = 0;
        if at(i, b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let start = i + 1;
            let mut end = start;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            // Go keeps nine digits and drops the rest.
            let mut scale = 100_000_000u32;
            for d in b.get(start..end.min(start + 9)).unwrap_or_default() {
                nanos += u32::from(d - b'0') * scale;
                scale /= 10;
            }
            i = end;
        }
        let rest = b.get(i..).unwrap_or_default();
        let offset: i32 = match rest {
            [b'Z'] => 0,
            [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
                let two = |a: u8, c: u8| -> Option<i32> {
                    (a.is_ascii_digit() && c.is_ascii_digit())
                        .then(|| i32::from(a - b'0') * 10 + i32::from(c - b'0'))
                };
                let (h, m) = (
                    two(*h1, *h2).ok_or_else(bad)?,
                    two(*m1, *m2).ok_or_else(bad)?,
                );
                if h > 23 || m > 59 {
                    return Err(bad());
                }
                let off = (h * 60 + m) * 60;
                if *sign == b'-' {
                    -off
                } else {
                    off
                }
            }
            _ => return Err(bad()),
        };
        let days = days_from_civil(year, month, day);
        let unix = days * 86_400 + hour * 3600 + minute * 60 + second - i64::from(offset);
        Ok(Time {
            unix,
            nanos,
            offset,
        })
    }

    /// Go's `time.RFC3339Nano` with the offset the time was read with:
    /// fractional seconds trimmed of trailing zeros, `Z` for UTC.
    pub fn to_rfc3339(&self) -> String {
        let local = self.unix + i64::from(self.offset);
        let (y, mo, d) = civil_from_days(local.div_euclid(86_400));
        let sod = local.rem_euclid(86_400);
        let mut s = format!(
            "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
            sod / 3600,
            sod % 3600 / 60,
            sod % 60
        );
        if self.nanos > 0 {
            let frac = format!("{:09}", self.nanos);
            s.push('.');
            s.push_str(frac.trim_end_matches('0'));
        }
        if self.offset == 0 {
            s.push('Z');
        } else {
            let sign = if self.offset < 0 { '-' } else { '+' };
            let off = self.offset.unsigned_abs() / 60;
            s.push_str(&format!("{sign}{:02}:{:02}", off / 60, off % 60));
        }
        s
    }
}

impl std::fmt::Display for Time {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl serde::Serialize for Time {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> serde::Deserialize<'de> for Time {
    /// As Go's `Time.UnmarshalJSON`: `null` is the zero time; anything but
    /// a string, or a string that is not strict RFC 3339 (an escape inside
    /// it included: Go parses the raw bytes), fails the whole record.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Time;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an RFC 3339 time string")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Time, E> {
                Ok(Time::ZERO)
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Time, E> {
                Ok(Time::ZERO)
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Time, D::Error> {
                d.deserialize_str(V)
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Time, E> {
                Time::parse(s).map_err(E::custom)
            }
            // serde_json hands a transient string only when it had to
            // unescape it: Go would have parsed the escape itself and failed.
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Time, E> {
                Err(E::custom(format!(
                    "{s:?} is not an RFC 3339 time (the string holds an escape)"
                )))
            }
            // An owned string comes from a parsed `Value`, where an escape
            // can no longer be seen.
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Time, E> {
                Time::parse(&s).map_err(E::custom)
            }
        }
        d.deserialize_option(V)
    }
}

#[cfg(test)]
mod time_tests {
    use super::*;

    #[test]
    fn go_strict_rfc3339_is_parsed_and_written_back_as_go_writes_it() {
        for s in [
            "2026-12-01T08:25:39.32186026Z",
            "2026-09-22T14:44:03.123456789+05:30",
            "2026-09-22T02:14:05.000000001-07:00",
            "0001-01-01T00:00:00Z",
            "2024-02-29T23:59:59Z",
        ] {
            assert_eq!(Time::parse(s).map(|t| t.to_rfc3339()), Ok(s.to_owned()));
        }
        assert_eq!(
            Time::parse("2026-09-22T09:14:03.000+00:00").map(|t| t.to_rfc3339()),
            Ok("2026-09-22T09:14:03Z".to_owned())
        );
        for bad in [
            "2026-09-22 09:14:03Z",
            "2026-09-22t09:14:03Z",
            "2026-09-22T09:14:03z",
            "2026-09-22T09:14:03",
            "2026-02-30T09:14:03Z",
            "2026-09-22T24:00:00Z",
            "2026-09-22T09:14:60Z",
            "2026-09-22T09:14:03+24:00",
            "2026-09-22T09:14:03+05:60",
            "2026-09-22T09:14:03+0530",
            "2026-09-22T09:14:03.Z",
            "yesterday",
            "",
        ] {
            assert!(Time::parse(bad).is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn times_compare_as_instants() {
        let a = Time::parse("2026-09-22T14:44:03+05:30");
        let b = Time::parse("2026-09-22T09:14:03Z");
        assert_eq!(a, b);
        assert!(
            Time::parse("2026-09-22T09:14:03.5-01:00").ok()
                > Time::parse("2026-09-22T09:14:04Z").ok()
        );
        assert!(Time::parse("0001-01-01T01:00:00+01:00").is_ok_and(|t| t.is_zero()));
    }

    #[test]
    fn json_decoding_is_go_faithful() {
        let ok: Result<Time, _> = serde_json::from_slice(br#""2026-09-22T09:14:03Z""#);
        assert!(ok.is_ok());
        let null: Result<Time, _> = serde_json::from_slice(b"null");
        assert!(null.is_ok_and(|t| t.is_zero()));
        for bad in [
            &br#""2026-09-22T09:14:03\u005a""#[..],
            b"12",
            b"true",
            b"{}",
        ] {
            assert!(serde_json::from_slice::<Time>(bad).is_err());
        }
    }
}

// ---- Time and duration arguments (the command line's one rule) ----
