//! DynamoDB's `N` type: a decimal with up to 38 significant digits.
//!
//! DynamoDB never rounds: a number with more than 38 significant digits, or
//! whose magnitude is outside 1E-130 ..= 9.99…E+125, is rejected. Numbers
//! compare numerically (`1.50` equals `1.5`), so the representation here is
//! normalised: the coefficient carries no trailing zeros, which makes the
//! derived equality and hashing numeric too.
//!
//! DynamoDB's older validation layer reads a number's magnitude in 32 bits,
//! as Java's `BigDecimal` gives it, so an exponent past that range wraps
//! there (`1e2147483647` reads as an underflow, not an overflow).
//! `Number::wraps_in_older_reading` says when that happens, so the
//! DynamoDB-compatible endpoint can answer such a number with the older
//! layer's words where DynamoDB does.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Most significant digits a DynamoDB number may carry.
pub(crate) const MAX_DIGITS: usize = 38;
/// Smallest allowed power of ten of the leading digit (1E-130).
pub(crate) const MIN_LEADING_EXPONENT: i32 = -130;
/// Largest allowed power of ten of the leading digit (9.99…E+125).
pub(crate) const MAX_LEADING_EXPONENT: i32 = 125;

/// An exact decimal: `(-1)^negative × coefficient × 10^exponent`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Number {
    negative: bool,
    /// No trailing decimal zeros; `0` only for the number zero.
    coefficient: u128,
    exponent: i16,
}

/// Why a string or an arithmetic result is not a valid DynamoDB number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    #[error("the string is not a number")]
    Syntax,
    #[error("Attempting to store more than 38 significant digits in a Number")]
    TooManyDigits,
    #[error(
        "Number overflow. Attempting to store a number with magnitude larger than supported range"
    )]
    Overflow,
    #[error(
        "Number underflow. Attempting to store a number with magnitude smaller than supported range"
    )]
    Underflow,
}

const fn pow10(n: u32) -> u128 {
    10u128.pow(n)
}

fn digit_count(mut v: u128) -> u32 {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

impl Number {
    pub const ZERO: Number = Number {
        negative: false,
        coefficient: 0,
        exponent: 0,
    };

    /// Builds a number, normalising and checking DynamoDB's limits.
    fn new(negative: bool, mut coefficient: u128, exponent: i64) -> Result<Number, NumberError> {
        if coefficient == 0 {
            return Ok(Number::ZERO);
        }
        let mut exponent = exponent;
        while coefficient.is_multiple_of(10) {
            coefficient /= 10;
            exponent += 1;
        }
        let digits = digit_count(coefficient);
        if digits as usize > MAX_DIGITS {
            return Err(NumberError::TooManyDigits);
        }
        let leading = exponent + i64::from(digits) - 1;
        if leading > i64::from(MAX_LEADING_EXPONENT) {
            return Err(NumberError::Overflow);
        }
        if leading < i64::from(MIN_LEADING_EXPONENT) {
            return Err(NumberError::Underflow);
        }
        Ok(Number {
            negative,
            coefficient,
            exponent: exponent as i16,
        })
    }

    /// The raw parts `(negative, coefficient, exponent)`, for compact storage.
    pub fn to_parts(&self) -> (bool, u128, i16) {
        (self.negative, self.coefficient, self.exponent)
    }

    /// Rebuilds a number from [`Number::to_parts`], checking every limit.
    pub fn from_parts(
        negative: bool,
        coefficient: u128,
        exponent: i16,
    ) -> Result<Number, NumberError> {
        Number::new(negative, coefficient, i64::from(exponent))
    }

    pub fn is_zero(&self) -> bool {
        self.coefficient == 0
    }

    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// The significant digits, most significant first (`"0"` for zero).
    pub fn digits(&self) -> String {
        self.coefficient.to_string()
    }

    /// Power of ten of the leading digit (0 for zero).
    pub fn leading_exponent(&self) -> i32 {
        if self.is_zero() {
            0
        } else {
            i32::from(self.exponent) + digit_count(self.coefficient) as i32 - 1
        }
    }

    /// Bytes DynamoDB charges for the value.
    ///
    /// The developer guide's rule ("Item sizes and formats") is "1 byte per
    /// two significant digits, plus 1 byte"; measurements of DynamoDB (the
    /// community's item-size calculators) refine it: digits are stored in
    /// pairs aligned on the decimal point (so `1.5` takes two pairs, `01`
    /// and `50`), a negative number takes one more byte, zero takes one
    /// byte in all, and no number takes more than 21.
    pub fn storage_size(&self) -> usize {
        const LARGEST: usize = 21;
        if self.is_zero() {
            return 1;
        }
        // Powers of ten of the last and the first significant digit; a
        // pair holds the digits of powers 2k and 2k + 1.
        let lowest = i64::from(self.exponent);
        let highest = i64::from(self.leading_exponent());
        let pairs = (highest.div_euclid(2) - lowest.div_euclid(2) + 1) as usize;
        let sign = usize::from(self.negative);
        (pairs + 1 + sign).min(LARGEST)
    }

    pub fn negated(&self) -> Number {
        if self.is_zero() {
            *self
        } else {
            Number {
                negative: !self.negative,
                ..*self
            }
        }
    }

    /// Exact sum; DynamoDB rejects a result it cannot hold rather than rounding.
    pub fn checked_add(&self, other: &Number) -> Result<Number, NumberError> {
        if self.is_zero() {
            return Ok(*other);
        }
        if other.is_zero() {
            return Ok(*self);
        }
        let exponent = self.exponent.min(other.exponent);
        let scale = |n: &Number| -> Result<u128, NumberError> {
            let shift =
                u32::try_from(n.exponent - exponent).map_err(|_| NumberError::TooManyDigits)?;
            if shift > MAX_DIGITS as u32 {
                return Err(NumberError::TooManyDigits);
            }
            n.coefficient
                .checked_mul(pow10(shift))
                .ok_or(NumberError::TooManyDigits)
        };
        let (a, b) = (scale(self)?, scale(other)?);
        let (negative, coefficient) = if self.negative == other.negative {
            (
                self.negative,
                a.checked_add(b).ok_or(NumberError::TooManyDigits)?,
            )
        } else if a >= b {
            (self.negative, a - b)
        } else {
            (other.negative, b - a)
        };
        Number::new(negative, coefficient, i64::from(exponent))
    }

    pub fn checked_sub(&self, other: &Number) -> Result<Number, NumberError> {
        self.checked_add(&other.negated())
    }

    /// The value as an `i64`, when it is an integer in range.
    pub fn to_i64(&self) -> Option<i64> {
        if self.exponent < 0 {
            return None;
        }
        let magnitude = self
            .coefficient
            .checked_mul(pow10(u32::try_from(self.exponent).ok()?))?;
        let magnitude = i128::try_from(magnitude).ok()?;
        i64::try_from(if self.negative { -magnitude } else { magnitude }).ok()
    }

    fn cmp_magnitude(&self, other: &Number) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        self.leading_exponent()
            .cmp(&other.leading_exponent())
            .then_with(|| {
                // Same leading exponent: compare digit strings, the shorter
                // one padded with zeros (a prefix is the smaller number).
                self.digits().cmp(&other.digits())
            })
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        let sign = |n: &Number| -> i8 {
            if n.is_zero() {
                0
            } else if n.negative {
                -1
            } else {
                1
            }
        };
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal if sign(self) < 0 => other.cmp_magnitude(self),
            Ordering::Equal => self.cmp_magnitude(other),
            unequal => unequal,
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A number's text split into its parts, before any of DynamoDB's limits:
/// `[+-]int[.frac][(e|E)[+-]exponent]`.
struct Written<'a> {
    negative: bool,
    int_part: &'a str,
    frac_part: &'a str,
    /// The exponent after `e` in full (0 without one).
    exponent: i64,
}

impl<'a> Written<'a> {
    /// Accepts `[+-]digits[.digits][(e|E)[+-]digits]`, as DynamoDB does:
    /// nothing around it, not even spaces.
    fn read(s: &'a str) -> Result<Written<'a>, NumberError> {
        let (negative, rest) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => {
                let exp = &rest[at + 1..];
                let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(NumberError::Syntax);
                }
                // An exponent beyond 64 bits is no number to DynamoDB.
                let value: i64 = digits.parse().map_err(|_| NumberError::Syntax)?;
                (
                    &rest[..at],
                    if exp.starts_with('-') { -value } else { value },
                )
            }
            None => (rest, 0),
        };
        let (int_part, frac_part) = match mantissa.split_once('.') {
            Some((i, f)) => (i, f),
            None => (mantissa, ""),
        };
        if int_part.is_empty() && frac_part.is_empty()
            || !int_part.bytes().all(|b| b.is_ascii_digit())
            || !frac_part.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(NumberError::Syntax);
        }
        Ok(Written {
            negative,
            int_part,
            frac_part,
            exponent,
        })
    }
}

impl Number {
    /// Whether DynamoDB's older validation layer, which reads a number as
    /// Java's `BigDecimal` does and takes its precision less its scale (the
    /// power of ten above the leading digit) in 32 bits, sees that power
    /// wrap negative: `1e2147483647`, which it then refuses as an underflow
    /// where the current layer says overflow. `BigDecimal` reads no
    /// exponent, and no scale, outside 32 bits at all.
    pub fn wraps_in_older_reading(text: &str) -> bool {
        let Ok(written) = Written::read(text) else {
            return false;
        };
        let exponent = i128::from(written.exponent);
        let scale = written.frac_part.len() as i128 - exponent;
        if i32::try_from(exponent).is_err() || i32::try_from(scale).is_err() {
            return false;
        }
        // The unscaled value's digits; zero has one.
        let unscaled = format!("{}{}", written.int_part, written.frac_part);
        let precision = unscaled.trim_start_matches('0').len().max(1);
        precision as i128 - scale > i128::from(i32::MAX)
    }
}

impl FromStr for Number {
    type Err = NumberError;

    fn from_str(s: &str) -> Result<Number, NumberError> {
        let Written {
            negative,
            int_part,
            frac_part,
            exponent,
        } = Written::read(s)?;
        // Short of 64 bits, an exponent beyond a few hundred can only
        // overflow or underflow: clamp so that the arithmetic below cannot.
        let exponent = exponent.clamp(-10_000, 10_000);
        let all_digits = format!("{int_part}{frac_part}");
        let significant = all_digits.trim_start_matches('0');
        let trimmed = significant.trim_end_matches('0');
        if trimmed.is_empty() {
            // Zero keeps the range check of its written exponent, as the
            // decimal DynamoDB parses it into does (one digit, at the
            // exponent the text gives it).
            let written = exponent - frac_part.len() as i64;
            return match written {
                w if w > i64::from(MAX_LEADING_EXPONENT) => Err(NumberError::Overflow),
                w if w < i64::from(MIN_LEADING_EXPONENT) => Err(NumberError::Underflow),
                _ => Ok(Number::ZERO),
            };
        }
        if trimmed.len() > MAX_DIGITS {
            return Err(NumberError::TooManyDigits);
        }
        let trailing = significant.len() - trimmed.len();
        let coefficient: u128 = trimmed.parse().map_err(|_| NumberError::Syntax)?;
        let exponent = exponent - frac_part.len() as i64 + trailing as i64;
        Number::new(negative, coefficient, exponent)
    }
}

impl fmt::Display for Number {
    /// Plain decimal notation without an exponent, as DynamoDB returns numbers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        let digits = self.digits();
        if self.exponent >= 0 {
            f.write_str(&digits)?;
            for _ in 0..self.exponent {
                f.write_str("0")?;
            }
            return Ok(());
        }
        let point = digits.len() as i32 + i32::from(self.exponent);
        if point > 0 {
            let (int, frac) = digits.split_at(point as usize);
            write!(f, "{int}.{frac}")
        } else {
            f.write_str("0.")?;
            for _ in 0..-point {
                f.write_str("0")?;
            }
            f.write_str(&digits)
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "N({self})")
    }
}

impl From<i64> for Number {
    fn from(v: i64) -> Number {
        // Any i64 has at most 19 digits, well inside DynamoDB's range.
        Number::new(v < 0, u128::from(v.unsigned_abs()), 0).unwrap_or(Number::ZERO)
    }
}

impl From<u64> for Number {
    fn from(v: u64) -> Number {
        Number::new(false, u128::from(v), 0).unwrap_or(Number::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn n(s: &str) -> Number {
        s.parse().expect("valid number")
    }

    #[test]
    fn parses_and_normalises() {
        assert_eq!(n("1.50"), n("1.5"));
        assert_eq!(n("001.500e1").to_string(), "15");
        assert_eq!(n("-0.0012").to_string(), "-0.0012");
        assert_eq!(n("12e3").to_string(), "12000");
        assert_eq!(n("-0"), Number::ZERO);
        assert_eq!(n("+7").to_string(), "7");
        assert_eq!(n(".5").to_string(), "0.5");
        assert_eq!(n("5.").to_string(), "5");
    }

    #[test]
    fn rejects_what_dynamodb_rejects() {
        for bad in [
            "", "-", "abc", "1e", "1.2.3", "e5", "0x10", "1,5", "--1", " 5", "5 ", "1 5", "\t5",
        ] {
            assert_eq!(bad.parse::<Number>(), Err(NumberError::Syntax), "{bad:?}");
        }
        let digits39 = "1".repeat(39);
        assert_eq!(digits39.parse::<Number>(), Err(NumberError::TooManyDigits));
        assert!("1".repeat(38).parse::<Number>().is_ok());
        assert_eq!("1e126".parse::<Number>(), Err(NumberError::Overflow));
        assert!(
            "9.9999999999999999999999999999999999999e125"
                .parse::<Number>()
                .is_ok()
        );
        assert_eq!("1e-131".parse::<Number>(), Err(NumberError::Underflow));
        assert!("1e-130".parse::<Number>().is_ok());
        assert_eq!("1e2147483647".parse::<Number>(), Err(NumberError::Overflow));
        // An exponent beyond 64 bits is not a number at all.
        assert_eq!(
            "1e9223372036854775808".parse::<Number>(),
            Err(NumberError::Syntax)
        );
        // Zero is checked at the exponent it is written with.
        assert_eq!("0e126".parse::<Number>(), Err(NumberError::Overflow));
        assert_eq!("0e-131".parse::<Number>(), Err(NumberError::Underflow));
        assert_eq!("0e125".parse::<Number>(), Ok(Number::ZERO));
        assert_eq!("0.0e126".parse::<Number>(), Ok(Number::ZERO));
    }

    #[test]
    fn the_older_reading_wraps_only_just_past_32_bits() {
        // Precision less scale is 2^31: it wraps, whatever the digits.
        for wraps in [
            "1e2147483647",
            "-1e2147483647",
            "10e2147483646",
            "1.5e2147483647",
            "0e2147483647",
        ] {
            assert!(Number::wraps_in_older_reading(wraps), "{wraps}");
        }
        // One short of it, below the range, or no BigDecimal at all (an
        // exponent or a scale outside 32 bits), and text that is no number.
        for stays in [
            "1e2147483646",
            "0.1e2147483647",
            "001e2147483646",
            "1e126",
            "1e-2147483647",
            "1e2147483648",
            "1e-2147483648",
            "1e99999999999",
            "abc",
            "",
        ] {
            assert!(!Number::wraps_in_older_reading(stays), "{stays}");
        }
    }

    #[test]
    fn compares_numerically() {
        assert!(n("-10") < n("-9.5"));
        assert!(n("-0.001") < n("0"));
        assert!(n("0") < n("1e-130"));
        assert!(n("9") < n("10"));
        assert!(n("1.2") < n("1.23"));
        assert!(n("-1.23") < n("-1.2"));
    }

    #[test]
    fn adds_exactly_or_refuses() {
        assert_eq!(n("0.1").checked_add(&n("0.2")), Ok(n("0.3")));
        assert_eq!(n("5").checked_sub(&n("7")), Ok(n("-2")));
        assert_eq!(
            n("1e100").checked_add(&n("1e-100")),
            Err(NumberError::TooManyDigits)
        );
        assert_eq!(n("-3").checked_add(&n("3")), Ok(Number::ZERO));
    }

    #[test]
    fn charges_bytes_per_two_digits_aligned_on_the_decimal_point() {
        // Zero is one byte.
        assert_eq!(n("0").storage_size(), 1);
        // One pair plus the byte of the exponent.
        assert_eq!(n("7").storage_size(), 2);
        assert_eq!(n("12").storage_size(), 2);
        // "1" "23": two pairs.
        assert_eq!(n("123").storage_size(), 3);
        // Trailing zero pairs are not stored: "1" "23" (00 00).
        assert_eq!(n("1230000").storage_size(), 3);
        assert_eq!(n("100").storage_size(), 2);
        // The sign costs a byte.
        assert_eq!(n("-7").storage_size(), 3);
        assert_eq!(n("-123").storage_size(), 4);
        // Digits straddling the point: "1" . "5" are two pairs, "01" "50".
        assert_eq!(n("1.5").storage_size(), 3);
        assert_eq!(n("12.34").storage_size(), 3);
        assert_eq!(n("0.5").storage_size(), 2);
        // Leading zero pairs after the point are not stored: (00) "5" + "0".
        assert_eq!(n("0.005").storage_size(), 2);
        assert_eq!(n("0.05").storage_size(), 2);
        // 38 digits: 19 pairs + 1, and never more than 21 bytes.
        let widest = "12345678901234567890123456789012345678";
        assert_eq!(n(widest).storage_size(), 20);
        assert_eq!(n(&format!("-{widest}")).storage_size(), 21);
        assert_eq!(
            n("-1.2345678901234567890123456789012345678").storage_size(),
            21
        );
    }

    proptest! {
        #[test]
        fn order_and_arithmetic_match_i128(a in -1_000_000_000i64..1_000_000_000, b in -1_000_000_000i64..1_000_000_000, scale in 0u32..6) {
            let div = 10i64.pow(scale) as f64;
            let (na, nb): (Number, Number) = (format!("{}", a as f64 / div).parse().unwrap(), format!("{}", b as f64 / div).parse().unwrap());
            // Compare against exact integer arithmetic on the scaled values.
            let (ia, ib) = (Number::from(a), Number::from(b));
            prop_assert_eq!(ia.cmp(&ib), a.cmp(&b));
            prop_assert_eq!(ia.checked_add(&ib).unwrap(), Number::from(a + b));
            prop_assert_eq!(na.to_string().parse::<Number>().unwrap(), na);
            prop_assert_eq!(nb.checked_sub(&nb).unwrap(), Number::ZERO);
        }
    }
}
