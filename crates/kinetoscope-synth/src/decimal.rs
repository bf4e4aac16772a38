//! Exact decimal arithmetic for `ts` / `dur` (microseconds in the file, integer
//! nanoseconds here), never through `f64`.

/// How a time value is written in the source (and written back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeStyle {
    /// Integer microseconds (`1623142623460111`, PyTorch ≤ 2.3).
    Micros,
    /// Microseconds with a 3-digit nanosecond fraction (`4380983323465.801`, PyTorch 2.4+).
    Nanos,
}

impl TimeStyle {
    /// The resolution of the style in nanoseconds.
    pub fn unit_ns(self) -> i64 {
        match self {
            TimeStyle::Micros => 1000,
            TimeStyle::Nanos => 1,
        }
    }
}

/// A JSON number split into an integer mantissa and a power of ten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decimal {
    mantissa: i128,
    exp10: i32,
    /// The text had a `.` or an exponent.
    fractional: bool,
}

fn parse_decimal(text: &str) -> Option<Decimal> {
    let b = text.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut mantissa: i128 = 0;
    let mut digits = 0usize;
    let mut exp10: i32 = 0;
    let mut any = false;
    // Past 36 significant digits the value no longer fits an i128 comfortably; later
    // digits are dropped (they are far below a nanosecond for any real timestamp).
    while i < b.len() && b[i].is_ascii_digit() {
        let d = b[i] - b'0';
        if mantissa != 0 || d != 0 {
            if digits < 36 {
                mantissa = mantissa * 10 + i128::from(d);
                digits += 1;
            } else {
                exp10 += 1;
            }
        }
        any = true;
        i += 1;
    }
    let mut fractional = false;
    if i < b.len() && b[i] == b'.' {
        fractional = true;
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            let d = b[i] - b'0';
            if mantissa == 0 && d == 0 {
                exp10 -= 1;
            } else if digits < 36 {
                mantissa = mantissa * 10 + i128::from(d);
                digits += 1;
                exp10 -= 1;
            }
            any = true;
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        fractional = true;
        i += 1;
        let eneg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i32 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            e = e.saturating_mul(10).saturating_add(i32::from(b[i] - b'0'));
            i += 1;
        }
        if i == start {
            return None;
        }
        exp10 = exp10.saturating_add(if eneg { -e } else { e });
    }
    if i != b.len() {
        return None;
    }
    Some(Decimal {
        mantissa: if neg { -mantissa } else { mantissa },
        exp10,
        fractional,
    })
}

/// Divides rounding half away from zero (`den > 0`).
pub(crate) fn div_round(num: i128, den: i128) -> i128 {
    let q = num / den;
    let r = num % den;
    if 2 * r.abs() >= den {
        q + num.signum()
    } else {
        q
    }
}

fn pow10(e: u32) -> Option<i128> {
    10i128.checked_pow(e)
}

/// Parses the text of a JSON number holding microseconds into exact nanoseconds.
///
/// Digits below the nanosecond are rounded half away from zero. Returns `None` for
/// text that is not a number or does not fit an `i64` of nanoseconds.
pub fn parse_micros(text: &str) -> Option<(i64, TimeStyle)> {
    let d = parse_decimal(text)?;
    let e = d.exp10 + 3;
    let ns = if d.mantissa == 0 {
        0
    } else if e >= 0 {
        d.mantissa.checked_mul(pow10(e as u32)?)?
    } else if e < -38 {
        0
    } else {
        div_round(d.mantissa, pow10((-e) as u32)?)
    };
    let style = if d.fractional {
        TimeStyle::Nanos
    } else {
        TimeStyle::Micros
    };
    Some((i64::try_from(ns).ok()?, style))
}

/// Parses the text of a JSON integer (no fraction, no exponent).
pub fn parse_int(text: &str) -> Option<i64> {
    let d = parse_decimal(text)?;
    if d.fractional || d.exp10 != 0 {
        return None;
    }
    i64::try_from(d.mantissa).ok()
}

/// A positive exact decimal factor such as the `1.3` of `--slowdown 1.3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Factor {
    num: i128,
    den: i128,
}

impl Factor {
    /// Parses a decimal such as `1.3` or `2`; it must be positive.
    pub fn parse(text: &str) -> Option<Factor> {
        let d = parse_decimal(text.trim())?;
        if d.mantissa <= 0 || !(-18..=18).contains(&d.exp10) {
            return None;
        }
        Some(if d.exp10 >= 0 {
            Factor {
                num: d.mantissa.checked_mul(pow10(d.exp10 as u32)?)?,
                den: 1,
            }
        } else {
            Factor {
                num: d.mantissa,
                den: pow10((-d.exp10) as u32)?,
            }
        })
    }

    /// Whether this is exactly 1.
    pub fn is_one(self) -> bool {
        self.num == self.den
    }

    /// `x × factor`, rounded to a multiple of `unit` (half away from zero).
    pub fn scale(self, x: i64, unit: i64) -> i64 {
        let v = div_round(i128::from(x) * self.num, self.den * i128::from(unit.max(1)))
            * i128::from(unit.max(1));
        v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}

/// Appends the decimal text of `v`.
pub fn push_int(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends nanoseconds `ns` as microseconds in `style` (`Micros` rounds to the
/// nearest µs, though callers only pass multiples of 1000 there).
pub fn push_time(out: &mut Vec<u8>, ns: i64, style: TimeStyle) {
    match style {
        TimeStyle::Micros => push_int(out, div_round(i128::from(ns), 1000) as i64),
        TimeStyle::Nanos => {
            if ns < 0 {
                out.push(b'-');
            }
            let a = ns.unsigned_abs();
            push_int(out, (a / 1000) as i64);
            let f = (a % 1000) as u16;
            out.push(b'.');
            out.push(b'0' + (f / 100) as u8);
            out.push(b'0' + (f / 10 % 10) as u8);
            out.push(b'0' + (f % 10) as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(ns: i64, style: TimeStyle) -> String {
        let mut v = Vec::new();
        push_time(&mut v, ns, style);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn parses_kineto_times_exactly() {
        assert_eq!(
            parse_micros("4380983323465.801"),
            Some((4_380_983_323_465_801, TimeStyle::Nanos))
        );
        assert_eq!(
            parse_micros("1712195495519689.047"),
            Some((1_712_195_495_519_689_047, TimeStyle::Nanos))
        );
        assert_eq!(
            parse_micros("1623142623460111"),
            Some((1_623_142_623_460_111_000, TimeStyle::Micros))
        );
        assert_eq!(parse_micros("0.5"), Some((500, TimeStyle::Nanos)));
        assert_eq!(parse_micros("-1.25"), Some((-1250, TimeStyle::Nanos)));
        assert_eq!(parse_micros("1.0005"), Some((1001, TimeStyle::Nanos)));
        assert_eq!(parse_micros("1.5e3"), Some((1_500_000, TimeStyle::Nanos)));
        assert_eq!(parse_micros("0"), Some((0, TimeStyle::Micros)));
        assert_eq!(parse_micros("abc"), None);
        assert_eq!(parse_micros("1."), Some((1000, TimeStyle::Nanos)));
        assert_eq!(parse_micros(""), None);
        assert_eq!(parse_micros("\"1\""), None);
    }

    #[test]
    fn formats_round_trip() {
        for text in [
            "4380983323465.801",
            "1712195495519689.047",
            "0.000",
            "12.030",
        ] {
            let (ns, style) = parse_micros(text).unwrap();
            assert_eq!(fmt(ns, style), text);
        }
        for text in ["1623142623460111", "0", "25"] {
            let (ns, style) = parse_micros(text).unwrap();
            assert_eq!(fmt(ns, style), text);
        }
        assert_eq!(fmt(-1250, TimeStyle::Nanos), "-1.250");
    }

    #[test]
    fn factors_scale_exactly() {
        let f = Factor::parse("1.3").unwrap();
        assert_eq!(f.scale(1000, 1), 1300);
        assert_eq!(f.scale(1000, 1000), 1000);
        assert_eq!(f.scale(2000, 1000), 3000); // 2600 → 3000
        assert!(Factor::parse("1").unwrap().is_one());
        assert!(Factor::parse("0").is_none());
        assert!(Factor::parse("-2").is_none());
        assert_eq!(Factor::parse("2").unwrap().scale(7, 1), 14);
    }

    #[test]
    fn ints() {
        assert_eq!(parse_int("42"), Some(42));
        assert_eq!(parse_int("-7"), Some(-7));
        assert_eq!(parse_int("4.0"), None);
        let mut v = Vec::new();
        push_int(&mut v, i64::MIN);
        assert_eq!(v, i64::MIN.to_string().as_bytes());
    }
}
