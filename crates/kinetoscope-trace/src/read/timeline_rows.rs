//! The rows of a memory timeline, streamed out of its JSON with `serde_json` visitors that
//! build no tree: numbers go straight into vectors charged to the memory budget, a row
//! longer than [`MAX_ROW`] numbers is refused, and a string anywhere is refused before
//! `serde_json` buffers it ([`NumbersOnly`]).

use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, SeqAccess, Visitor};
use serde::Deserializer;

use crate::model::{grow, Charge};

/// Most numbers in one row (9 in both forms).
const MAX_ROW: usize = 64;

/// What the walk found.
pub(crate) enum Rows {
    /// `[times_us, sizes]`.
    Coalesced {
        /// The times, µs.
        times: Vec<i64>,
        /// The rows of sizes, as written (8 or 9 columns).
        sizes: Vec<Vec<i64>>,
    },
    /// `[[t_ns, action, bytes, category], ...]`: the rows as written.
    Raw(Vec<[i64; 4]>),
}

/// Reads through `inner`, refusing the first `"`: a memory timeline holds only numbers,
/// so no string (of any size) ever reaches the parser.
pub(crate) struct NumbersOnly<R>(pub R);

impl<R: Read> Read for NumbersOnly<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        if memchr::memchr(b'"', &buf[..n]).is_some() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a string, where a memory timeline holds only numbers",
            ));
        }
        Ok(n)
    }
}

/// Walk the whole text read by `de`, charging what is kept to `charge`.
pub(crate) fn walk<'de, D: Deserializer<'de>>(
    de: D,
    charge: &mut Charge,
) -> Result<Rows, D::Error> {
    de.deserialize_seq(Outer { charge })
}

fn oom<E: de::Error>(e: crate::model::MemoryError) -> E {
    E::custom(format!("{e}; raise --max-memory"))
}

/// A number: an integer as written, a float truncated toward zero.
struct Num(i64);

impl<'de> de::Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumOrRowVisitor).and_then(|v| match v {
            NumOrRow::Num(x) => Ok(Num(x)),
            NumOrRow::Row(_) => Err(de::Error::custom("an array where a number belongs")),
        })
    }
}

/// A number or a short row of numbers.
enum NumOrRow {
    Num(i64),
    Row(Vec<i64>),
}

struct NumOrRowVisitor;

impl<'de> Visitor<'de> for NumOrRowVisitor {
    type Value = NumOrRow;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a number or a row of numbers")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<NumOrRow, E> {
        Ok(NumOrRow::Num(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<NumOrRow, E> {
        Ok(NumOrRow::Num(i64::try_from(v).unwrap_or(i64::MAX)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<NumOrRow, E> {
        Ok(NumOrRow::Num(v as i64))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NumOrRow, A::Error> {
        let mut row = Vec::new();
        while let Some(Num(x)) = seq.next_element()? {
            if row.len() == MAX_ROW {
                return Err(de::Error::custom(format!(
                    "a row of more than {MAX_ROW} numbers"
                )));
            }
            row.push(x);
        }
        Ok(NumOrRow::Row(row))
    }
}

/// A short row of numbers.
struct Row(Vec<i64>);

impl<'de> de::Deserialize<'de> for Row {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_any(NumOrRowVisitor)? {
            NumOrRow::Row(r) => Ok(Row(r)),
            NumOrRow::Num(_) => Err(de::Error::custom("a number where a row belongs")),
        }
    }
}

/// The numbers of an array, into a charged vector.
struct Numbers<'a> {
    out: &'a mut Vec<i64>,
    charge: &'a mut Charge,
}

impl<'de> DeserializeSeed<'de> for Numbers<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Numbers<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of numbers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(Num(x)) = seq.next_element()? {
            grow(self.out, 1, self.charge).map_err(oom)?;
            self.out.push(x);
        }
        Ok(())
    }
}

/// The second element: a raw row (numbers), or the coalesced form's rows of sizes.
enum Second {
    Row(Vec<i64>),
    Sizes(Vec<Vec<i64>>),
}

struct SecondSeed<'a> {
    charge: &'a mut Charge,
}

impl<'de> DeserializeSeed<'de> for SecondSeed<'_> {
    type Value = Second;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Second, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SecondSeed<'_> {
    type Value = Second;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a row of numbers or an array of rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Second, A::Error> {
        match seq.next_element_seed(NumOrRowSeed)? {
            None => Ok(Second::Row(Vec::new())),
            Some(NumOrRow::Num(x)) => {
                let mut row = vec![x];
                while let Some(Num(x)) = seq.next_element()? {
                    if row.len() == MAX_ROW {
                        return Err(de::Error::custom("a row of more than 64 numbers"));
                    }
                    row.push(x);
                }
                Ok(Second::Row(row))
            }
            Some(NumOrRow::Row(first)) => {
                let mut sizes = vec![first];
                while let Some(Row(r)) = seq.next_element()? {
                    let bytes = (r.len() * 8 + 24) as u64;
                    self.charge.take(bytes).map_err(oom)?;
                    grow(&mut sizes, 1, self.charge).map_err(oom)?;
                    sizes.push(r);
                }
                Ok(Second::Sizes(sizes))
            }
        }
    }
}

struct NumOrRowSeed;

impl<'de> DeserializeSeed<'de> for NumOrRowSeed {
    type Value = NumOrRow;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<NumOrRow, D::Error> {
        d.deserialize_any(NumOrRowVisitor)
    }
}

struct Outer<'a> {
    charge: &'a mut Charge,
}

impl<'de> Visitor<'de> for Outer<'_> {
    type Value = Rows;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array: [times, sizes] or rows [t, action, bytes, category]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Rows, A::Error> {
        let mut first = Vec::new();
        let numbers = Numbers {
            out: &mut first,
            charge: self.charge,
        };
        if seq.next_element_seed(numbers)?.is_none() {
            return Ok(Rows::Raw(Vec::new()));
        }
        let second = seq.next_element_seed(SecondSeed {
            charge: self.charge,
        })?;
        let second = match second {
            Some(Second::Sizes(sizes)) => {
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom("a third element after [times, sizes]"));
                }
                return Ok(Rows::Coalesced {
                    times: first,
                    sizes,
                });
            }
            Some(Second::Row(r)) => Some(r),
            None => None,
        };
        let mut rows = Vec::new();
        let mut push = |k: usize, r: &[i64], charge: &mut Charge| {
            if r.len() < 4 {
                return Err(de::Error::custom(format!(
                    "row #{k} is not [t, action, bytes, category]"
                )));
            }
            grow(&mut rows, 1, charge).map_err(oom)?;
            rows.push([r[0], r[1], r[2], r[3]]);
            Ok(())
        };
        push(0, &first, self.charge)?;
        if let Some(r) = second {
            push(1, &r, self.charge)?;
            let mut k = 2;
            while let Some(Row(r)) = seq.next_element()? {
                push(k, &r, self.charge)?;
                k += 1;
            }
        }
        Ok(Rows::Raw(rows))
    }
}
