//! The forms cells take in shops' exports: dates in several shapes, yes/no
//! flags, ratings, lists of image URLs.

use rave_comments::Timestamp;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// A date as exports write it: RFC 3339 with any offset
/// (`2024-03-05T14:30:00+01:00`), `2024-03-05 14:30:00` (with or without
/// seconds, ` UTC` or a `+0000` offset), `2024-03-05T14:30:00`, a bare
/// `2024-03-05`, or a spreadsheet's US `3/5/2024` (optionally `14:30`).
/// Times without an offset are taken as UTC; precision beyond the
/// millisecond is dropped.
pub(crate) fn date(text: &str) -> Result<Timestamp, String> {
    let text = text.trim();
    let parsed = OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .or_else(|| with_offset(text))
        .or_else(|| without_offset(text).map(PrimitiveDateTime::assume_utc));
    let Some(parsed) = parsed else {
        return Err(format!(
            "{text:?} is not a date (such as 2024-03-05, 2024-03-05 14:30:00 or 2024-03-05T14:30:00Z)"
        ));
    };
    let millis = parsed.unix_timestamp_nanos() / 1_000_000;
    i64::try_from(millis)
        .ok()
        .and_then(|ms| Timestamp::from_millis(ms).ok())
        .ok_or_else(|| format!("{text:?} is outside 1970-9999"))
}

/// `2024-03-05 14:30:00 +0000` and `... +00:00`.
fn with_offset(text: &str) -> Option<OffsetDateTime> {
    let (local, offset) = text.rsplit_once(' ')?;
    let offset = UtcOffset::parse(
        offset,
        format_description!("[offset_hour sign:mandatory][offset_minute]"),
    )
    .or_else(|_| {
        UtcOffset::parse(
            offset,
            format_description!("[offset_hour sign:mandatory]:[offset_minute]"),
        )
    })
    .ok()?;
    Some(without_offset(local)?.assume_offset(offset))
}

fn without_offset(text: &str) -> Option<PrimitiveDateTime> {
    let text = text.strip_suffix(" UTC").unwrap_or(text);
    let full = [
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second].[subsecond]"),
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]"),
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second]"),
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
        format_description!("[year]-[month]-[day] [hour]:[minute]"),
        format_description!(
            "[month padding:none]/[day padding:none]/[year] [hour padding:none]:[minute]:[second]"
        ),
        format_description!(
            "[month padding:none]/[day padding:none]/[year] [hour padding:none]:[minute]"
        ),
    ];
    if let Some(parsed) = full
        .iter()
        .find_map(|format| PrimitiveDateTime::parse(text, format).ok())
    {
        return Some(parsed);
    }
    let day = [
        format_description!("[year]-[month]-[day]"),
        format_description!("[month padding:none]/[day padding:none]/[year]"),
    ];
    day.iter()
        .find_map(|format| Date::parse(text, format).ok())
        .map(|date| PrimitiveDateTime::new(date, Time::MIDNIGHT))
}

/// A yes/no cell: `true`/`false`, `yes`/`no`, `1`/`0`, `y`/`n` (any case);
/// an empty cell is `None`.
pub(crate) fn flag(text: &str) -> Result<Option<bool>, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "true" | "yes" | "y" | "1" => Ok(Some(true)),
        "false" | "no" | "n" | "0" => Ok(Some(false)),
        other => Err(format!("{other:?} is neither yes nor no (true/false, 1/0)")),
    }
}

/// Whether a verified-buyer cell says the buyer was verified: a yes (as
/// [`flag`] reads it) or the platforms' words for it (`verified`, `buyer`,
/// `verified buyer`). Anything else, an empty cell too, is not verified.
pub(crate) fn verified(text: &str) -> bool {
    let text = text.trim().to_ascii_lowercase();
    flag(&text) == Ok(Some(true))
        || matches!(
            text.as_str(),
            "verified" | "buyer" | "verified buyer" | "verified_buyer" | "verified-buyer"
        )
}

/// A star rating: a whole number 1-5 (`4`, `4.0`).
pub(crate) fn rating(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let whole = text.strip_suffix(".0").unwrap_or(text);
    match whole.parse::<i64>() {
        Ok(stars @ 1..=5) => Ok(stars),
        _ => Err(format!("{text:?} is not a whole number from 1 to 5")),
    }
}

/// The image URLs of a cell, however the platform separated them.
pub(crate) fn image_urls(text: &str) -> Vec<String> {
    text.split(|c: char| matches!(c, ',' | ';' | '|') || c.is_whitespace())
        .filter(|url| !url.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_the_shapes_exports_write_them() {
        let utc = |t: &str| Timestamp::parse(t).unwrap();
        for (text, expected) in [
            ("2024-03-05T14:30:00Z", "2024-03-05T14:30:00.000Z"),
            ("2024-03-05T14:30:00.1234+01:00", "2024-03-05T13:30:00.123Z"),
            ("2024-03-05 14:30:00", "2024-03-05T14:30:00.000Z"),
            ("2024-03-05 14:30:00 UTC", "2024-03-05T14:30:00.000Z"),
            ("2024-03-05 14:30:00 -0500", "2024-03-05T19:30:00.000Z"),
            ("2024-03-05 14:30", "2024-03-05T14:30:00.000Z"),
            ("2024-03-05T14:30:00", "2024-03-05T14:30:00.000Z"),
            ("2024-03-05", "2024-03-05T00:00:00.000Z"),
            ("3/5/2024", "2024-03-05T00:00:00.000Z"),
            ("3/5/2024 9:07", "2024-03-05T09:07:00.000Z"),
        ] {
            assert_eq!(date(text), Ok(utc(expected)), "{text}");
        }
        for bad in ["", "yesterday", "2024-13-01", "1969-12-31"] {
            assert!(date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn flags_ratings_and_image_lists() {
        assert_eq!(flag(" TRUE "), Ok(Some(true)));
        assert_eq!(flag("0"), Ok(Some(false)));
        assert_eq!(flag(""), Ok(None));
        assert!(flag("maybe").is_err());
        assert!(verified("Verified Buyer") && verified("yes") && !verified(""));
        assert!(!verified("unverified"));
        assert_eq!(rating("4.0"), Ok(4));
        for bad in ["0", "6", "4.5", "five", ""] {
            assert!(rating(bad).is_err(), "{bad}");
        }
        assert_eq!(
            image_urls("https://a/1.jpg, https://a/2.jpg|https://a/3.jpg"),
            ["https://a/1.jpg", "https://a/2.jpg", "https://a/3.jpg"]
        );
    }
}
