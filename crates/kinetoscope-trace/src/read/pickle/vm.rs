//! A pickle virtual machine for the data-only subset of protocols 2–5.
//!
//! It builds values, never objects: no opcode that imports a name, calls a callable or
//! sets attributes is executed; each is refused with [`PickleError::Refused`]. Containers
//! live in a flat arena ([`Pickle::objects`]) addressed by index, so memo references
//! share containers the way Python's unpickler does (a list memoized empty and filled
//! later is seen filled through every reference), cycles cost nothing, and no recursion
//! or recursive drop ever happens however deep the nesting.

use std::collections::HashMap;
use std::rc::Rc;

use super::limits::{MAX_MARKS, MAX_MEMO, MAX_OBJECTS, MAX_STACK};
use crate::model::{grow, Charge, MemoryError};

/// One value on the pickle stack or inside a container.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An integer that fits 64 signed bits.
    Int(i64),
    /// An integer in [2^63, 2^64) (an address or pointer above `i64::MAX`).
    UInt(u64),
    /// An integer outside both (kept only as a marker).
    BigInt,
    /// A float.
    Float(f64),
    /// A text string.
    Str(Rc<str>),
    /// A bytes object.
    Bytes(Rc<[u8]>),
    /// A container: an index into [`Pickle::objects`].
    Obj(u32),
}

/// A container in the arena.
#[derive(Clone, Debug, PartialEq)]
pub enum Obj {
    /// A list.
    List(Vec<Val>),
    /// A tuple.
    Tuple(Vec<Val>),
    /// A dict as its items in insertion order (a repeated key: the last one wins).
    Dict(Vec<(Val, Val)>),
    /// A set or frozenset.
    Set(Vec<Val>),
}

impl Obj {
    /// `list`, `tuple`, `dict` or `set`: for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Obj::List(_) => "list",
            Obj::Tuple(_) => "tuple",
            Obj::Dict(_) => "dict",
            Obj::Set(_) => "set",
        }
    }
}

/// A decoded pickle: the root value and the containers it refers to.
#[derive(Clone, Debug, Default)]
pub struct Pickle {
    /// The protocol from the `PROTO` opcode (0 when there was none).
    pub protocol: u8,
    /// The value `STOP` returned.
    pub root: Option<Val>,
    /// Every container, by index.
    pub objects: Vec<Obj>,
    /// Byte offset of the opcode that created each container (same index).
    pub offsets: Vec<u64>,
}

impl Pickle {
    /// The container behind `v`, if it is one.
    pub fn obj(&self, v: &Val) -> Option<&Obj> {
        match v {
            Val::Obj(i) => self.objects.get(*i as usize),
            _ => None,
        }
    }

    /// Byte offset where the container behind `v` was created.
    pub fn offset_of(&self, v: &Val) -> Option<u64> {
        match v {
            Val::Obj(i) => self.offsets.get(*i as usize).copied(),
            _ => None,
        }
    }

    /// A short type name for error messages.
    pub fn type_name(&self, v: &Val) -> &'static str {
        match v {
            Val::None => "None",
            Val::Bool(_) => "bool",
            Val::Int(_) | Val::UInt(_) | Val::BigInt => "int",
            Val::Float(_) => "float",
            Val::Str(_) => "str",
            Val::Bytes(_) => "bytes",
            Val::Obj(_) => self.obj(v).map_or("object", Obj::type_name),
        }
    }
}

/// Why a pickle could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PickleError {
    /// An opcode that would import or call Python code (a pickle is a program).
    #[error("byte {offset}: refused opcode {name} (0x{op:02x}): it would import or call Python code; a memory snapshot holds only dicts, lists, tuples, strings and numbers")]
    Refused {
        /// Its name (`GLOBAL`, `REDUCE`, ...).
        name: &'static str,
        /// The opcode byte.
        op: u8,
        /// Its byte offset.
        offset: u64,
    },
    /// A valid opcode outside the supported subset (protocol 0/1 text opcodes,
    /// out-of-band buffers).
    #[error("byte {offset}: unsupported pickle opcode {name} (0x{op:02x})")]
    Unsupported {
        /// Its name, or `unknown`.
        name: &'static str,
        /// The opcode byte.
        op: u8,
        /// Its byte offset.
        offset: u64,
    },
    /// A structural error: stack underflow, a missing mark, a bad memo key, a truncated
    /// argument, a limit exceeded.
    #[error("byte {offset}: {message}")]
    Invalid {
        /// Byte offset of the opcode.
        offset: u64,
        /// What was wrong.
        message: String,
    },
}

impl PickleError {
    /// Byte offset of the opcode at fault.
    pub fn offset(&self) -> u64 {
        match self {
            Self::Refused { offset, .. }
            | Self::Unsupported { offset, .. }
            | Self::Invalid { offset, .. } => *offset,
        }
    }
}

/// The opcodes refused because they import or call code, with their names.
pub const REFUSED_OPCODES: &[(u8, &str)] = &[
    (b'c', "GLOBAL"),
    (0x93, "STACK_GLOBAL"),
    (b'R', "REDUCE"),
    (b'b', "BUILD"),
    (b'i', "INST"),
    (b'o', "OBJ"),
    (0x81, "NEWOBJ"),
    (0x92, "NEWOBJ_EX"),
    (0x82, "EXT1"),
    (0x83, "EXT2"),
    (0x84, "EXT4"),
    (b'P', "PERSID"),
    (b'Q', "BINPERSID"),
];

/// Names of valid opcodes this reader does not support (text protocol 0/1 forms and
/// protocol 5 out-of-band buffers).
const UNSUPPORTED_OPCODES: &[(u8, &str)] = &[
    (b'I', "INT"),
    (b'L', "LONG"),
    (b'F', "FLOAT"),
    (b'S', "STRING"),
    (b'V', "UNICODE"),
    (b'p', "PUT"),
    (b'g', "GET"),
    (0x97, "NEXT_BUFFER"),
    (0x98, "READONLY_BUFFER"),
];

struct Vm<'a, 'c> {
    data: &'a [u8],
    pos: usize,
    op_at: usize,
    stack: Vec<Val>,
    marks: Vec<usize>,
    memo: HashMap<u32, Val>,
    out: Pickle,
    /// The stack, containers, their items and the memo are charged here as they grow.
    charge: &'c mut Charge,
}

/// Bytes charged per memo entry (key, value and the table's share).
const MEMO_ENTRY_BYTES: u64 = 40;

/// Decode a pickle held in memory. Trailing bytes after `STOP` are ignored, as Python
/// does.
pub fn unpickle(data: &[u8]) -> Result<Pickle, PickleError> {
    unpickle_charged(data, &mut Charge::default())
}

/// [`unpickle`], charging what the values hold to `charge` as they grow; running out is
/// an error (and `charge.refused()` says why), never an abort.
pub(crate) fn unpickle_charged(data: &[u8], charge: &mut Charge) -> Result<Pickle, PickleError> {
    let mut vm = Vm {
        data,
        pos: 0,
        op_at: 0,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        out: Pickle::default(),
        charge,
    };
    vm.run()?;
    Ok(vm.out)
}

impl<'a> Vm<'a, '_> {
    /// The error for memory that could not be had.
    fn oom(&self, e: MemoryError) -> PickleError {
        self.err(e.to_string())
    }

    fn err(&self, message: impl Into<String>) -> PickleError {
        PickleError::Invalid {
            offset: self.op_at as u64,
            message: message.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        let left = self.data.len() - self.pos;
        if n > left {
            return Err(self.err(format!(
                "truncated: the opcode needs {n} more bytes, {left} left"
            )));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, PickleError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, PickleError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, PickleError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn len_u64(&mut self) -> Result<usize, PickleError> {
        let n = self.u64()?;
        usize::try_from(n).map_err(|_| self.err(format!("length {n} is too large")))
    }

    fn push(&mut self, v: Val) -> Result<(), PickleError> {
        if self.stack.len() >= MAX_STACK {
            return Err(self.err(format!(
                "stack deeper than {MAX_STACK} values (limit against hostile input)"
            )));
        }
        if let Err(e) = grow(&mut self.stack, 1, self.charge) {
            return Err(self.oom(e));
        }
        self.stack.push(v);
        Ok(())
    }

    fn pop(&mut self) -> Result<Val, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err("stack underflow"));
        }
        Ok(self.stack.pop().expect("checked"))
    }

    fn top(&self) -> Result<&Val, PickleError> {
        self.stack.last().ok_or_else(|| self.err("stack underflow"))
    }

    fn pop_mark(&mut self) -> Result<Vec<Val>, PickleError> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| self.err("no MARK to pop to"))?;
        Ok(self.stack.split_off(m))
    }

    fn new_obj(&mut self, o: Obj) -> Result<Val, PickleError> {
        if self.out.objects.len() >= MAX_OBJECTS {
            return Err(self.err(format!(
                "more than {MAX_OBJECTS} containers (limit against hostile input)"
            )));
        }
        let grown = grow(&mut self.out.objects, 1, self.charge)
            .and_then(|()| grow(&mut self.out.offsets, 1, self.charge));
        if let Err(e) = grown {
            return Err(self.oom(e));
        }
        self.out.objects.push(o);
        self.out.offsets.push(self.op_at as u64);
        Ok(Val::Obj((self.out.objects.len() - 1) as u32))
    }

    fn container_mut(&mut self, target: &Val) -> Result<&mut Obj, PickleError> {
        let what = self.out.type_name(target);
        match target {
            Val::Obj(i) => Ok(&mut self.out.objects[*i as usize]),
            _ => Err(self.err(format!("cannot add items to a {what}"))),
        }
    }

    fn extend_list(&mut self, target: Val, items: Vec<Val>) -> Result<(), PickleError> {
        let bytes = (items.len() * std::mem::size_of::<Val>()) as u64;
        self.charge.take(bytes).map_err(|e| self.oom(e))?;
        let op_at = self.op_at;
        match self.container_mut(&target)? {
            Obj::List(l) | Obj::Set(l) => {
                l.extend(items);
                Ok(())
            }
            o => Err(PickleError::Invalid {
                offset: op_at as u64,
                message: format!("cannot append to a {}", o.type_name()),
            }),
        }
    }

    fn extend_dict(&mut self, target: Val, items: Vec<Val>) -> Result<(), PickleError> {
        if !items.len().is_multiple_of(2) {
            return Err(self.err("odd number of items for a dict"));
        }
        let bytes = (items.len() * std::mem::size_of::<Val>()) as u64;
        self.charge.take(bytes).map_err(|e| self.oom(e))?;
        let op_at = self.op_at;
        match self.container_mut(&target)? {
            Obj::Dict(d) => {
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    d.push((k, v));
                }
                Ok(())
            }
            o => Err(PickleError::Invalid {
                offset: op_at as u64,
                message: format!("cannot set items of a {}", o.type_name()),
            }),
        }
    }

    fn memo_put(&mut self, key: u32) -> Result<(), PickleError> {
        if self.memo.len() >= MAX_MEMO && !self.memo.contains_key(&key) {
            return Err(self.err(format!(
                "more than {MAX_MEMO} memo entries (limit against hostile input)"
            )));
        }
        let v = self.top()?.clone();
        if !self.memo.contains_key(&key) {
            self.charge
                .take(MEMO_ENTRY_BYTES)
                .map_err(|e| self.oom(e))?;
        }
        self.memo.insert(key, v);
        Ok(())
    }

    fn memo_get(&mut self, key: u32) -> Result<(), PickleError> {
        let v = self
            .memo
            .get(&key)
            .cloned()
            .ok_or_else(|| self.err(format!("memo key {key} was never stored")))?;
        self.push(v)
    }

    fn string(&mut self, n: usize) -> Result<(), PickleError> {
        let b = self.take(n)?;
        let s: Rc<str> = match std::str::from_utf8(b) {
            Ok(s) => s.into(),
            // Python writes surrogates as invalid UTF-8 ("surrogatepass"); keep the text.
            Err(_) => String::from_utf8_lossy(b).as_ref().into(),
        };
        self.push(Val::Str(s))
    }

    fn bytes(&mut self, n: usize) -> Result<(), PickleError> {
        let b = self.take(n)?;
        self.push(Val::Bytes(b.into()))
    }

    fn long(&mut self, n: usize) -> Result<(), PickleError> {
        let b = self.take(n)?;
        if n == 0 {
            return self.push(Val::Int(0));
        }
        // Little-endian two's complement.
        let negative = b[n - 1] & 0x80 != 0;
        if n <= 8 {
            let mut a = [if negative { 0xff } else { 0 }; 8];
            a[..n].copy_from_slice(b);
            return self.push(Val::Int(i64::from_le_bytes(a)));
        }
        // Wider: a non-negative value whose extra bytes are zero fits u64.
        if !negative && b[8..].iter().all(|x| *x == 0) {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[..8]);
            return self.push(Val::UInt(u64::from_le_bytes(a)));
        }
        self.push(Val::BigInt)
    }

    fn tuple_of(&mut self, n: usize) -> Result<(), PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() < floor + n {
            return Err(self.err("stack underflow"));
        }
        let bytes = (n * std::mem::size_of::<Val>()) as u64;
        self.charge.take(bytes).map_err(|e| self.oom(e))?;
        let items = self.stack.split_off(self.stack.len() - n);
        let t = self.new_obj(Obj::Tuple(items))?;
        self.push(t)
    }

    /// Run the program until its STOP opcode; the root object is left in `self.out`.
    fn run(&mut self) -> Result<(), PickleError> {
        loop {
            self.op_at = self.pos;
            if self.pos >= self.data.len() {
                return Err(self.err("truncated: no STOP opcode"));
            }
            let op = self.u8()?;
            match op {
                b'.' => {
                    let root = self.pop()?;
                    self.out.root = Some(root);
                    return Ok(());
                }
                0x80 => self.protocol()?,
                // FRAME: an 8-byte length; frames only help buffered readers.
                0x95 => {
                    self.u64()?;
                }
                b'(' => self.mark()?,
                b'0' => {
                    self.pop()?;
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let v = self.top()?.clone();
                    self.push(v)?;
                }
                b'N' => self.push(Val::None)?,
                0x88 => self.push(Val::Bool(true))?,
                0x89 => self.push(Val::Bool(false))?,
                b'J' | b'K' | b'M' => self.small_int(op)?,
                0x8a | 0x8b => self.long_op(op)?,
                b'G' => self.float()?,
                0x8c | b'X' | 0x8d | b'U' | b'T' => self.string_op(op)?,
                b'C' | b'B' | 0x8e | 0x96 => self.bytes_op(op)?,
                b'}' | b']' | 0x8f | b')' => self.empty_container(op)?,
                b'd' | b'l' | 0x91 | b't' => self.container_from_mark(op)?,
                b's' | b'u' | b'a' | b'e' | 0x90 => self.add_to_top(op)?,
                0x85 => self.tuple_of(1)?,
                0x86 => self.tuple_of(2)?,
                0x87 => self.tuple_of(3)?,
                b'q' | b'r' | 0x94 => self.memo_put_op(op)?,
                b'h' | b'j' => self.memo_get_op(op)?,
                _ => return Err(self.unsupported(op)),
            }
        }
    }

    /// PROTO: the protocol version (up to 5).
    fn protocol(&mut self) -> Result<(), PickleError> {
        let p = self.u8()?;
        if p > 5 {
            return Err(self.err(format!("unsupported pickle protocol {p}")));
        }
        self.out.protocol = p;
        Ok(())
    }

    /// MARK, with a bound on nesting against hostile input.
    fn mark(&mut self) -> Result<(), PickleError> {
        if self.marks.len() >= MAX_MARKS {
            return Err(self.err(format!(
                "more than {MAX_MARKS} nested MARKs (limit against hostile input)"
            )));
        }
        self.marks.push(self.stack.len());
        Ok(())
    }

    /// BININT, BININT1, BININT2: a 4-, 1- or 2-byte integer.
    fn small_int(&mut self, op: u8) -> Result<(), PickleError> {
        let v = match op {
            b'J' => self.u32()? as i32 as i64,
            b'K' => self.u8()? as i64,
            _ => self.u16()? as i64,
        };
        self.push(Val::Int(v))
    }

    /// LONG1, LONG4: a little-endian two's-complement integer of 1- or 4-byte length.
    fn long_op(&mut self, op: u8) -> Result<(), PickleError> {
        let n = if op == 0x8a {
            self.u8()? as usize
        } else {
            let n = self.u32()? as i32;
            if n < 0 {
                return Err(self.err("LONG4 with a negative length"));
            }
            n as usize
        };
        self.long(n)
    }

    /// BINFLOAT: a big-endian double.
    fn float(&mut self) -> Result<(), PickleError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        self.push(Val::Float(f64::from_be_bytes(a)))
    }

    /// SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, SHORT_BINSTRING, BINSTRING: a string
    /// whose length is read by the opcode's width.
    fn string_op(&mut self, op: u8) -> Result<(), PickleError> {
        let n = match op {
            0x8c | b'U' => self.u8()? as usize,
            b'X' => self.u32()? as usize,
            0x8d => self.len_u64()?,
            _ => {
                let n = self.u32()? as i32;
                if n < 0 {
                    return Err(self.err("BINSTRING with a negative length"));
                }
                n as usize
            }
        };
        self.string(n)
    }

    /// SHORT_BINBYTES, BINBYTES, BINBYTES8, BYTEARRAY8: bytes whose length is read by
    /// the opcode's width.
    fn bytes_op(&mut self, op: u8) -> Result<(), PickleError> {
        let n = match op {
            b'C' => self.u8()? as usize,
            b'B' => self.u32()? as usize,
            _ => self.len_u64()?,
        };
        self.bytes(n)
    }

    /// EMPTY_DICT, EMPTY_LIST, EMPTY_SET, EMPTY_TUPLE.
    fn empty_container(&mut self, op: u8) -> Result<(), PickleError> {
        let obj = match op {
            b'}' => Obj::Dict(Vec::new()),
            b']' => Obj::List(Vec::new()),
            0x8f => Obj::Set(Vec::new()),
            _ => Obj::Tuple(Vec::new()),
        };
        let v = self.new_obj(obj)?;
        self.push(v)
    }

    /// DICT, LIST, FROZENSET, TUPLE: a container of the items above the last mark.
    fn container_from_mark(&mut self, op: u8) -> Result<(), PickleError> {
        let items = self.pop_mark()?;
        let v = match op {
            b'd' => {
                let d = self.new_obj(Obj::Dict(Vec::new()))?;
                self.extend_dict(d.clone(), items)?;
                d
            }
            b'l' => self.new_obj(Obj::List(items))?,
            0x91 => self.new_obj(Obj::Set(items))?,
            _ => self.new_obj(Obj::Tuple(items))?,
        };
        self.push(v)
    }

    /// SETITEM, SETITEMS, APPEND, APPENDS, ADDITEMS: items added to the container on
    /// top of the stack.
    fn add_to_top(&mut self, op: u8) -> Result<(), PickleError> {
        match op {
            b's' => {
                let v = self.pop()?;
                let k = self.pop()?;
                let d = self.top()?.clone();
                self.extend_dict(d, vec![k, v])
            }
            b'u' => {
                let items = self.pop_mark()?;
                let d = self.top()?.clone();
                self.extend_dict(d, items)
            }
            b'a' => {
                let v = self.pop()?;
                let l = self.top()?.clone();
                self.extend_list(l, vec![v])
            }
            // APPENDS and ADDITEMS.
            _ => {
                let items = self.pop_mark()?;
                let l = self.top()?.clone();
                self.extend_list(l, items)
            }
        }
    }

    /// BINPUT, LONG_BINPUT, MEMOIZE: the top of the stack kept under a key.
    fn memo_put_op(&mut self, op: u8) -> Result<(), PickleError> {
        let k = match op {
            b'q' => self.u8()? as u32,
            b'r' => self.u32()?,
            _ => u32::try_from(self.memo.len()).map_err(|_| self.err("memo overflow"))?,
        };
        self.memo_put(k)
    }

    /// BINGET, LONG_BINGET: a kept object pushed again.
    fn memo_get_op(&mut self, op: u8) -> Result<(), PickleError> {
        let k = match op {
            b'h' => self.u8()? as u32,
            _ => self.u32()?,
        };
        self.memo_get(k)
    }

    /// The error for an opcode this reader refuses (code execution) or does not know.
    fn unsupported(&self, op: u8) -> PickleError {
        let offset = self.op_at as u64;
        if let Some((_, name)) = REFUSED_OPCODES.iter().find(|(o, _)| *o == op) {
            return PickleError::Refused { name, op, offset };
        }
        let name = UNSUPPORTED_OPCODES
            .iter()
            .find(|(o, _)| *o == op)
            .map_or("unknown", |(_, n)| n);
        PickleError::Unsupported { name, op, offset }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_memoized_containers() {
        // PROTO 4, EMPTY_LIST, MEMOIZE, EMPTY_LIST, BINGET 0, APPEND (outer = [inner])
        // then append 7 to inner via BINGET; the outer list must see it.
        let p = [
            0x80, 4, b']', 0x94, b']', b'h', 0, b'a', b'h', 0, b'K', 7, b'a', b'0', b'.',
        ];
        let r = unpickle(&p).unwrap();
        let root = r.root.clone().unwrap();
        let Some(Obj::List(outer)) = r.obj(&root) else {
            panic!("not a list")
        };
        assert_eq!(outer.len(), 1);
        // the appends went to the memoized first list
        assert_eq!(r.obj(&outer[0]), Some(&Obj::List(vec![Val::Int(7)])));
    }

    #[test]
    fn long1_sign() {
        let p = [0x80, 2, 0x8a, 2, 0xff, 0x7f, b'.'];
        assert_eq!(unpickle(&p).unwrap().root, Some(Val::Int(0x7fff)));
        let p = [0x80, 2, 0x8a, 1, 0xff, b'.'];
        assert_eq!(unpickle(&p).unwrap().root, Some(Val::Int(-1)));
        // 2^64 - 1 is written in 9 bytes (a zero sign byte).
        let p = [
            0x80, 2, 0x8a, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, b'.',
        ];
        assert_eq!(unpickle(&p).unwrap().root, Some(Val::UInt(u64::MAX)));
        let p = [0x80, 2, 0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1, b'.'];
        assert_eq!(unpickle(&p).unwrap().root, Some(Val::BigInt));
        assert_eq!(std::mem::size_of::<Val>(), 24);
    }
}
