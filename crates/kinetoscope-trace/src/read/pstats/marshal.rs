//! A decoder for the subset of Python's `marshal` format that pstats files use.
//!
//! Accepted: `None`, `True`, `False`, ints (`TYPE_INT`, and `TYPE_LONG` up to 64 bits;
//! wider ones are kept as a marker the schema rejects), floats (binary and text), every
//! string type (str, interned, ascii, short ascii, bytes), tuples (and small tuples),
//! lists, dicts, sets and frozensets, and references (`FLAG_REF` / `TYPE_REF`). Code
//! objects and every other type are refused with an error naming the byte offset.
//!
//! Containers live in a flat arena addressed by index, so references share them as
//! Python does and a reference loop costs nothing. Nesting is capped at
//! [`MAX_DEPTH`](super::limits::MAX_DEPTH); every length is checked against the bytes
//! left before anything is allocated; what is built is charged to the memory budget.

use std::rc::Rc;

use super::limits::{MAX_DEPTH, MAX_OBJECTS};
use crate::model::{grow, Charge};

/// One marshal value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An integer that fits 64 signed bits.
    Int(i64),
    /// A wider integer (kept only as a marker).
    BigInt,
    /// A float.
    Float(f64),
    /// A text string (str, or bytes read as UTF-8, invalid sequences replaced).
    Str(Rc<str>),
    /// A container: an index into [`Marshal::objects`].
    Obj(u32),
}

/// A container in the arena.
#[derive(Clone, Debug, PartialEq)]
pub enum Obj {
    /// A tuple.
    Tuple(Vec<Val>),
    /// A list.
    List(Vec<Val>),
    /// A dict as its items in file order.
    Dict(Vec<(Val, Val)>),
    /// A set or frozenset.
    Set(Vec<Val>),
}

impl Obj {
    /// `tuple`, `list`, `dict` or `set`: for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Obj::Tuple(_) => "tuple",
            Obj::List(_) => "list",
            Obj::Dict(_) => "dict",
            Obj::Set(_) => "set",
        }
    }
}

/// A decoded marshal stream: the root value and the containers it refers to.
#[derive(Debug, Default)]
pub struct Marshal {
    /// The first value of the stream.
    pub root: Option<Val>,
    /// Every container, by index.
    pub objects: Vec<Obj>,
    /// Byte offset of the type code that created each container (same index).
    pub offsets: Vec<u64>,
}

/// Why a marshal stream could not be decoded: a message and the byte offset.
#[derive(Debug, Clone, PartialEq)]
pub struct MarshalError {
    /// Byte offset of the type code (or length) at fault.
    pub offset: u64,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for MarshalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

type Res<T> = Result<T, MarshalError>;

const FLAG_REF: u8 = 0x80;

/// Decode the first value of `data` (what `marshal.load` reads), charging what is built
/// to `charge`.
pub(crate) fn decode(data: &[u8], charge: &mut Charge) -> Res<Marshal> {
    let mut d = Decoder {
        data,
        pos: 0,
        refs: Vec::new(),
        out: Marshal::default(),
        charge,
    };
    let root = d.value(0)?;
    d.out.root = Some(root);
    Ok(d.out)
}

struct Decoder<'a, 'c> {
    data: &'a [u8],
    pos: usize,
    refs: Vec<Val>,
    out: Marshal,
    charge: &'c mut Charge,
}

impl Decoder<'_, '_> {
    fn err<T>(&self, offset: usize, message: impl Into<String>) -> Res<T> {
        Err(MarshalError {
            offset: offset as u64,
            message: message.into(),
        })
    }

    fn oom<T>(&self, offset: usize) -> Res<T> {
        self.err(offset, "out of memory")
    }

    fn take(&mut self, n: usize) -> Res<&[u8]> {
        let at = self.pos;
        if self.data.len() - at < n {
            return self.err(
                at,
                format!("truncated: {n} bytes needed, {} left", self.data.len() - at),
            );
        }
        self.pos += n;
        Ok(&self.data[at..at + n])
    }

    fn u8(&mut self) -> Res<u8> {
        Ok(self.take(1)?[0])
    }

    fn i32(&mut self) -> Res<i32> {
        let b = self.take(4)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A length prefix (`i32`) of the value whose type code is at `at`, refused when
    /// negative or longer than the bytes left divided by `min_item` (the fewest bytes
    /// one item takes).
    fn len(&mut self, at: usize, min_item: usize) -> Res<usize> {
        let n = self.i32()?;
        let left = self.data.len() - self.pos;
        if n < 0 || n as usize > left / min_item {
            return self.err(
                at,
                format!("length {n} is negative or past the end ({left} bytes left)"),
            );
        }
        Ok(n as usize)
    }

    fn value(&mut self, depth: usize) -> Res<Val> {
        let at = self.pos;
        if depth > MAX_DEPTH {
            return self.err(at, format!("nested deeper than {MAX_DEPTH} levels"));
        }
        let code = self.u8()?;
        let flag = code & FLAG_REF != 0;
        let ty = code & !FLAG_REF;
        let v = match ty {
            b'N' => Val::None,
            b'T' => Val::Bool(true),
            b'F' => Val::Bool(false),
            b'i' => Val::Int(self.i32()?.into()),
            b'l' => self.long(at)?,
            b'g' => {
                let b = self.take(8)?;
                Val::Float(f64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            b'f' => {
                let n = self.u8()? as usize;
                let text = self.take(n)?;
                match std::str::from_utf8(text).ok().and_then(|t| t.parse().ok()) {
                    Some(x) => Val::Float(x),
                    None => return self.err(at, "a text float that is not a number"),
                }
            }
            b's' | b'u' | b't' | b'a' | b'A' => {
                let n = self.len(at, 1)?;
                self.text(n)?
            }
            b'z' | b'Z' => {
                let n = self.u8()? as usize;
                self.text(n)?
            }
            b'(' | b'[' | b'<' | b'>' => {
                let n = self.len(at, 1)?;
                return self.sequence(at, ty, n, flag, depth);
            }
            b')' => {
                let n = self.u8()? as usize;
                return self.sequence(at, ty, n, flag, depth);
            }
            b'{' => return self.dict(at, flag, depth),
            b'r' => {
                let i = self.i32()? as u32 as usize;
                return match self.refs.get(i) {
                    Some(v) => Ok(v.clone()),
                    None => self.err(at, format!("reference {i} to an object not yet read")),
                };
            }
            b'c' => return self.err(at, "a code object: refused (pstats files hold none)"),
            b'0' => return self.err(at, "NULL outside a dict"),
            other => {
                return self.err(
                    at,
                    format!(
                        "marshal type {:?} is not one pstats uses: refused",
                        other as char
                    ),
                )
            }
        };
        if flag {
            self.push_ref(at, v.clone())?;
        }
        Ok(v)
    }

    fn push_ref(&mut self, at: usize, v: Val) -> Res<usize> {
        if grow(&mut self.refs, 1, self.charge).is_err() {
            return self.oom(at);
        }
        self.refs.push(v);
        Ok(self.refs.len() - 1)
    }

    fn text(&mut self, n: usize) -> Res<Val> {
        let at = self.pos;
        let bytes = self.take(n)?;
        let s: Rc<str> = String::from_utf8_lossy(bytes).into();
        if self.charge.take(n as u64).is_err() {
            return self.oom(at);
        }
        Ok(Val::Str(s))
    }

    /// `TYPE_LONG`: a signed count of 15-bit digits, least significant first.
    fn long(&mut self, at: usize) -> Res<Val> {
        let n = self.i32()?;
        let digits = n.unsigned_abs() as usize;
        if digits > (self.data.len() - self.pos) / 2 {
            return self.err(at, format!("long of {digits} digits past the end"));
        }
        let mut v: i128 = 0;
        let mut wide = false;
        for i in 0..digits {
            let b = self.take(2)?;
            let d = u16::from_le_bytes([b[0], b[1]]);
            if d >= 1 << 15 {
                return self.err(at, "long digit out of range");
            }
            if i >= 5 {
                wide |= d != 0;
            } else {
                v |= i128::from(d) << (15 * i);
            }
        }
        if n < 0 {
            v = -v;
        }
        Ok(match i64::try_from(v) {
            Ok(x) if !wide => Val::Int(x),
            _ => Val::BigInt,
        })
    }

    /// A new container, registered as a reference before its items are read (as
    /// CPython does), so a reference inside it may name it.
    fn new_obj(&mut self, at: usize, obj: Obj, flag: bool) -> Res<u32> {
        if self.out.objects.len() >= MAX_OBJECTS {
            return self.err(at, format!("more than {MAX_OBJECTS} containers"));
        }
        if grow(&mut self.out.objects, 1, self.charge).is_err()
            || grow(&mut self.out.offsets, 1, self.charge).is_err()
        {
            return self.oom(at);
        }
        let id = self.out.objects.len() as u32;
        self.out.objects.push(obj);
        self.out.offsets.push(at as u64);
        if flag {
            self.push_ref(at, Val::Obj(id))?;
        }
        Ok(id)
    }

    fn sequence(&mut self, at: usize, ty: u8, n: usize, flag: bool, depth: usize) -> Res<Val> {
        let id = self.new_obj(at, Obj::Tuple(Vec::new()), flag)?;
        let mut items = Vec::new();
        if grow(&mut items, n, self.charge).is_err() {
            return self.oom(at);
        }
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        self.out.objects[id as usize] = match ty {
            b'(' | b')' => Obj::Tuple(items),
            b'[' => Obj::List(items),
            _ => Obj::Set(items),
        };
        Ok(Val::Obj(id))
    }

    fn dict(&mut self, at: usize, flag: bool, depth: usize) -> Res<Val> {
        let id = self.new_obj(at, Obj::Dict(Vec::new()), flag)?;
        let mut items = Vec::new();
        loop {
            if self.data.get(self.pos) == Some(&b'0') {
                self.pos += 1;
                break;
            }
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            if grow(&mut items, 1, self.charge).is_err() {
                return self.oom(at);
            }
            items.push((k, v));
        }
        self.out.objects[id as usize] = Obj::Dict(items);
        Ok(Val::Obj(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(data: &[u8]) -> Res<Marshal> {
        decode(data, &mut Charge::default())
    }

    #[test]
    fn scalars_and_containers() {
        let m = dec(b"{)\x03z\x01ai\x07\x00\x00\x00z\x01fg\x00\x00\x00\x00\x00\x00\xf8?0").unwrap();
        let Some(Val::Obj(d)) = m.root else { panic!() };
        let Obj::Dict(items) = &m.objects[d as usize] else {
            panic!()
        };
        assert_eq!(items.len(), 1);
        let Val::Obj(t) = items[0].0 else { panic!() };
        assert_eq!(
            m.objects[t as usize],
            Obj::Tuple(vec![
                Val::Str("a".into()),
                Val::Int(7),
                Val::Str("f".into())
            ])
        );
        assert_eq!(items[0].1, Val::Float(1.5));
    }

    #[test]
    fn longs_and_text_floats() {
        // 2**30 + 5 = digits [5, 0, 1]
        let m = dec(b"l\x03\x00\x00\x00\x05\x00\x00\x00\x01\x00").unwrap();
        assert_eq!(m.root, Some(Val::Int((1 << 30) + 5)));
        let m = dec(b"l\xfe\xff\xff\xff\x01\x00\x01\x00").unwrap();
        assert_eq!(m.root, Some(Val::Int(-((1 << 15) + 1))));
        let m = dec(b"f\x051e-05").unwrap();
        assert_eq!(m.root, Some(Val::Float(1e-5)));
    }

    #[test]
    fn refusals_name_the_offset() {
        let e = dec(b")\x01c").unwrap_err();
        assert_eq!(e.offset, 2);
        assert!(e.message.contains("code object"), "{e}");
        let e = dec(b")\x01(\xff\xff\xff\x7fN").unwrap_err();
        assert_eq!(e.offset, 2);
        let e = dec(b"r\x05\x00\x00\x00").unwrap_err();
        assert!(e.message.contains("reference 5"), "{e}");
        let deep = [b")\x01".repeat(MAX_DEPTH + 2), b"N".to_vec()].concat();
        assert!(dec(&deep).unwrap_err().message.contains("nested deeper"));
    }

    #[test]
    fn a_reference_loop_is_harmless() {
        // a tuple (with FLAG_REF, ref 0) whose only item is a reference to itself
        let m = dec(b"\xa9\x01r\x00\x00\x00\x00").unwrap();
        assert_eq!(m.objects[0], Obj::Tuple(vec![Val::Obj(0)]));
    }
}
