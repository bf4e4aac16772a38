//! Parsing one element of `traceEvents` into a [`RawEvent`]: spans into the buffer plus
//! the arguments analyses need, whatever the key order.

use super::lexer::{
    has_control_byte, micros_to_ns, parse_f64, parse_i64, word_at, Lex, LexError, Lexer, StrSpan,
};

/// A `pid`/`tid` value as found: an integer or a string span.
#[derive(Clone, Copy, Debug, Default)]
pub enum IdValue {
    /// Absent.
    #[default]
    None,
    /// An integer.
    Int(i64),
    /// A string (span into the buffer).
    Str(StrSpan),
}

/// Defects found while parsing one element that did not stop it.
#[derive(Clone, Copy, Debug, Default)]
pub struct ElementDefects {
    /// An unescaped quote in the name was repaired.
    pub unescaped_quote: bool,
    /// A bare token (`N/A`) stood for a value.
    pub bare_token: bool,
    /// The name held a raw control character.
    pub control_char: bool,
    /// `dur` was negative (read as 0).
    pub negative_duration: bool,
}

/// One parsed element, borrowing the buffer.
#[derive(Default)]
pub struct RawEvent {
    /// `ph` first byte (0 when absent).
    pub ph: u8,
    /// `cat`, if present.
    pub cat: Option<StrSpan>,
    /// `name`, if present.
    pub name: Option<StrSpan>,
    /// `pid`.
    pub pid: IdValue,
    /// `tid`.
    pub tid: IdValue,
    /// `ts` in ns (relative to the base in 2.4+ files).
    pub ts_ns: Option<i64>,
    /// Whether `ts` had a fractional part.
    pub ts_fraction: bool,
    /// `dur` in ns.
    pub dur_ns: i64,
    /// Flow `id` (number, or a string holding one).
    pub id: Option<u64>,
    /// Arguments.
    pub args: ArgsScratch,
    /// Defects repaired in place.
    pub defects: ElementDefects,
    /// A `pid`/`tid` was a string holding a number or `stream N` (1.8/1.9 files).
    pub string_id: bool,
}

/// The `args` keys analyses need, captured as found.
#[derive(Default)]
pub struct ArgsScratch {
    pub external_id: Option<i64>,
    pub correlation: Option<i64>,
    pub device: Option<i64>,
    pub stream: Option<i64>,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub registers: Option<u32>,
    pub shared_memory: Option<u64>,
    pub blocks_per_sm: Option<f32>,
    pub warps_per_sm: Option<f32>,
    pub occupancy: Option<f32>,
    pub bytes: Option<i64>,
    pub input_dims: Option<(usize, usize)>,
    pub input_types: Option<(usize, usize)>,
    pub input_strides: Option<(usize, usize)>,
    pub concrete_inputs: Option<(usize, usize)>,
    pub call_stack: Option<StrSpan>,
    pub module_hierarchy: Option<StrSpan>,
    pub sequence_number: Option<i64>,
    pub fwd_thread_id: Option<i64>,
    pub addr: Option<u64>,
    pub total_allocated: Option<i64>,
    pub total_reserved: Option<i64>,
    pub device_type: Option<i64>,
    pub device_id: Option<i64>,
    pub collective_name: Option<StrSpan>,
    pub dtype: Option<StrSpan>,
    pub in_msg_nelems: Option<i64>,
    pub out_msg_nelems: Option<i64>,
    pub group_size: Option<i64>,
    pub pg_name: Option<(usize, usize)>,
    pub pg_desc: Option<StrSpan>,
    pub pg_ranks: Option<(usize, usize)>,
    pub seq: Option<i64>,
    pub comms_id: Option<u64>,
    pub python_id: Option<i64>,
    pub python_parent_id: Option<i64>,
    pub python_module_id: Option<i64>,
    /// Which groups of fields were set ([`ArgsScratch::reset`] clears only those).
    pub touched: u8,
    /// Metadata value (`name`, `labels` or `sort_index` of an `M` event).
    pub meta_text: Option<StrSpan>,
    /// Feature flags seen in args.
    pub saw_profiler_event_index: bool,
    pub saw_ev_idx: bool,
    pub saw_record_function_id: bool,
}

const KERNEL: u8 = 1;
const OP: u8 = 2;
const MEMORY: u8 = 4;
const COLLECTIVE: u8 = 8;
const PYTHON: u8 = 16;

impl ArgsScratch {
    /// Clear for the next event. Only the groups an event touched are cleared, so the
    /// per-event cost does not grow with the number of arguments kinetoscope knows.
    pub fn reset(&mut self) {
        let t = std::mem::take(&mut self.touched);
        self.external_id = None;
        self.correlation = None;
        self.bytes = None;
        self.meta_text = None;
        self.saw_profiler_event_index = false;
        self.saw_ev_idx = false;
        self.saw_record_function_id = false;
        if t & KERNEL != 0 {
            self.device = None;
            self.stream = None;
            self.grid = None;
            self.block = None;
            self.registers = None;
            self.shared_memory = None;
            self.blocks_per_sm = None;
            self.warps_per_sm = None;
            self.occupancy = None;
        }
        if t & OP != 0 {
            self.input_dims = None;
            self.input_types = None;
            self.input_strides = None;
            self.concrete_inputs = None;
            self.call_stack = None;
            self.module_hierarchy = None;
            self.sequence_number = None;
            self.fwd_thread_id = None;
        }
        if t & MEMORY != 0 {
            self.addr = None;
            self.total_allocated = None;
            self.total_reserved = None;
            self.device_type = None;
            self.device_id = None;
        }
        if t & COLLECTIVE != 0 {
            self.collective_name = None;
            self.dtype = None;
            self.in_msg_nelems = None;
            self.out_msg_nelems = None;
            self.group_size = None;
            self.pg_name = None;
            self.pg_desc = None;
            self.pg_ranks = None;
            self.seq = None;
            self.comms_id = None;
        }
        if t & PYTHON != 0 {
            self.python_id = None;
            self.python_parent_id = None;
            self.python_module_id = None;
        }
    }
}

impl RawEvent {
    /// Clear for the next element, keeping nothing from the last one.
    #[inline]
    pub fn reset(&mut self) {
        self.ph = 0;
        self.cat = None;
        self.name = None;
        self.pid = IdValue::None;
        self.tid = IdValue::None;
        self.ts_ns = None;
        self.ts_fraction = false;
        self.dur_ns = 0;
        self.id = None;
        self.defects = ElementDefects::default();
        self.string_id = false;
        self.args.reset();
    }
}

/// Parse one element starting at `{`. On success the lexer is just past the closing `}`.
#[inline(always)]
pub fn parse_event(lx: &mut Lexer<'_>, ev: &mut RawEvent) -> Lex<()> {
    lx.expect(b'{', "expected `{` to open an event")?;
    if lx.peek()? == b'}' {
        lx.pos += 1;
        return Ok(());
    }
    loop {
        match event_key(lx)? {
            EventKey::Close => {
                lx.pos += 1;
                return Ok(());
            }
            EventKey::Ph => {
                let s = lx.string()?;
                ev.ph = lx
                    .buf
                    .get(s.start)
                    .copied()
                    .filter(|_| s.end > s.start)
                    .unwrap_or(0);
            }
            EventKey::Cat => ev.cat = Some(lx.string()?),
            EventKey::Name => ev.name = Some(name_string(lx, &mut ev.defects)?),
            EventKey::Pid => ev.pid = id_value(lx, &mut ev.defects, &mut ev.string_id)?,
            EventKey::Tid => ev.tid = id_value(lx, &mut ev.defects, &mut ev.string_id)?,
            EventKey::Ts => match lx.plain_micros() {
                Some((ns, fraction)) => {
                    ev.ts_ns = Some(ns);
                    ev.ts_fraction = fraction;
                }
                None => {
                    let (s, e) = lx.scalar()?;
                    let text = &lx.buf[s..e];
                    ev.ts_ns = micros_to_ns(text);
                    ev.ts_fraction = memchr::memchr(b'.', text).is_some();
                    if ev.ts_ns.is_none() {
                        ev.defects.bare_token = true;
                    }
                }
            },
            EventKey::Dur => match lx.plain_micros() {
                Some((d, _)) => ev.dur_ns = d,
                None => {
                    let (s, e) = lx.scalar()?;
                    match micros_to_ns(&lx.buf[s..e]) {
                        Some(d) => {
                            ev.defects.negative_duration |= d < 0;
                            ev.dur_ns = d.max(0);
                        }
                        None => ev.defects.bare_token = true,
                    }
                }
            },
            EventKey::Id => {
                if lx.peek()? == b'"' {
                    let s = lx.string()?;
                    ev.id = std::str::from_utf8(&lx.buf[s.start..s.end])
                        .ok()
                        .and_then(|t| {
                            t.parse::<u64>().ok().or_else(|| {
                                u64::from_str_radix(t.trim_start_matches("0x"), 16).ok()
                            })
                        });
                } else if let Some(v) = lx.plain_int() {
                    ev.id = Some(v as u64);
                } else {
                    let (s, e) = lx.scalar()?;
                    ev.id = parse_i64(&lx.buf[s..e]).map(|v| v as u64);
                }
            }
            EventKey::Args => parse_args(lx, ev)?,
            EventKey::Other => {
                let mut bare = false;
                lx.skip_value(&mut bare)?;
                ev.defects.bare_token |= bare;
            }
        }
        match lx.peek()? {
            b',' => lx.pos += 1,
            b'}' => {
                lx.pos += 1;
                return Ok(());
            }
            _ => {
                return Err(LexError::Bad(
                    "expected `,` or `}` after a value in an event",
                ))
            }
        }
    }
}

/// The keys of an event that kinetoscope reads.
#[derive(Clone, Copy)]
enum EventKey {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Args,
    Other,
    /// No key but the event's closing `}`, after a trailing comma (tolerated).
    Close,
}

/// A key as written with its quotes and colon (`"ph":`, at most 8 bytes): its bytes as
/// a little-endian word, the mask of those bytes, and its length.
#[derive(Clone, Copy)]
struct KeyWord {
    word: u64,
    mask: u64,
    len: usize,
}

impl KeyWord {
    const fn of(text: &[u8]) -> Self {
        let mut word = 0u64;
        let mut i = 0;
        while i < text.len() {
            word |= (text[i] as u64) << (8 * i);
            i += 1;
        }
        let mask = if text.len() >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * text.len())) - 1
        };
        Self {
            word,
            mask,
            len: text.len(),
        }
    }
}

const PH: KeyWord = KeyWord::of(br#""ph":"#);
const CAT: KeyWord = KeyWord::of(br#""cat":"#);
const NAME: KeyWord = KeyWord::of(br#""name":"#);
const PID: KeyWord = KeyWord::of(br#""pid":"#);
const TID: KeyWord = KeyWord::of(br#""tid":"#);
const TS: KeyWord = KeyWord::of(br#""ts":"#);
const DUR: KeyWord = KeyWord::of(br#""dur":"#);
const ID: KeyWord = KeyWord::of(br#""id":"#);
const ARGS: KeyWord = KeyWord::of(br#""args":"#);

/// Read an event's key and the colon after it. A key of the format written as Kineto
/// writes it (the colon right after the closing quote) is recognised from one 8-byte
/// load; anything else goes through the lexer, with the same result. A `}` in place of
/// a key (after a trailing comma) reads as [`EventKey::Close`].
#[inline(always)]
fn event_key(lx: &mut Lexer<'_>) -> Lex<EventKey> {
    lx.skip_ws();
    let Some(w) = word_at(lx.buf, lx.pos) else {
        return event_key_lexed(lx);
    };
    let is = |k: KeyWord| w & k.mask == k.word;
    let (key, len) = match (w >> 8) as u8 {
        b'p' if is(PH) => (EventKey::Ph, PH.len),
        b'p' if is(PID) => (EventKey::Pid, PID.len),
        b'c' if is(CAT) => (EventKey::Cat, CAT.len),
        b'n' if is(NAME) => (EventKey::Name, NAME.len),
        b't' if is(TID) => (EventKey::Tid, TID.len),
        b't' if is(TS) => (EventKey::Ts, TS.len),
        b'd' if is(DUR) => (EventKey::Dur, DUR.len),
        b'a' if is(ARGS) => (EventKey::Args, ARGS.len),
        b'i' if is(ID) => (EventKey::Id, ID.len),
        _ => return event_key_lexed(lx),
    };
    lx.pos += len;
    Ok(key)
}

/// [`event_key`] through the lexer: any key, any spacing.
#[inline(never)]
fn event_key_lexed(lx: &mut Lexer<'_>) -> Lex<EventKey> {
    if lx.peek()? == b'}' {
        return Ok(EventKey::Close);
    }
    let key = lx.string()?;
    lx.expect(b':', "expected `:` after a key")?;
    Ok(match &lx.buf[key.start..key.end] {
        b"ph" => EventKey::Ph,
        b"cat" => EventKey::Cat,
        b"name" => EventKey::Name,
        b"pid" => EventKey::Pid,
        b"tid" => EventKey::Tid,
        b"ts" => EventKey::Ts,
        b"dur" => EventKey::Dur,
        b"id" => EventKey::Id,
        b"args" => EventKey::Args,
        _ => EventKey::Other,
    })
}

/// A `name` value, repairing a quote that was not escaped: when the string does not end
/// before `,` or `}`, the real end is the next `"` that does.
fn name_string(lx: &mut Lexer<'_>, defects: &mut ElementDefects) -> Lex<StrSpan> {
    let s = lx.string()?;
    let buf = lx.buf;
    let mut end = s.end;
    let mut escaped = s.escaped;
    loop {
        match closes_name(buf, end) {
            None => return Err(LexError::Eof),
            Some(true) => break,
            Some(false) => {}
        }
        // The quote at `end` was inside the name: the name ends at the next quote that
        // is followed by `,` or `}`.
        defects.unescaped_quote = true;
        let mut i = end + 1;
        loop {
            match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                None => return Err(LexError::Eof),
                Some(k) if buf[i + k] == b'\\' => {
                    escaped = true;
                    i += k + 2;
                    if i >= buf.len() {
                        return Err(LexError::Eof);
                    }
                }
                Some(k) => {
                    end = i + k;
                    break;
                }
            }
        }
        if end - s.start > 1 << 16 {
            return Err(LexError::Bad("a name that does not end"));
        }
    }
    lx.pos = end + 1;
    let span = StrSpan {
        start: s.start,
        end,
        escaped,
    };
    if has_control_byte(&buf[span.start..span.end]) {
        defects.control_char = true;
    }
    Ok(span)
}

/// Whether the quote at `q` can end a `name` value: it is followed by `,` and another
/// key, or by `}` and what may follow an event. `None` when the buffer ends first.
fn closes_name(buf: &[u8], q: usize) -> Option<bool> {
    let skip = |p: usize| {
        let mut lx = Lexer::new(buf, p);
        lx.skip_ws();
        lx.pos
    };
    let p = skip(q + 1);
    match *buf.get(p)? {
        b',' => Some(*buf.get(skip(p + 1))? == b'"'),
        b'}' => Some(matches!(*buf.get(skip(p + 1))?, b',' | b']' | b'}')),
        _ => Some(false),
    }
}

fn id_value(
    lx: &mut Lexer<'_>,
    defects: &mut ElementDefects,
    string_id: &mut bool,
) -> Lex<IdValue> {
    if lx.peek()? == b'"' {
        let s = lx.string()?;
        let text = &lx.buf[s.start..s.end];
        if text.starts_with(b"stream ") || (!text.is_empty() && text.iter().all(u8::is_ascii_digit))
        {
            *string_id = true;
        }
        return Ok(match parse_i64(text) {
            Some(v)
                if !text.is_empty() && text.iter().all(|b| b.is_ascii_digit() || *b == b'-') =>
            {
                IdValue::Int(v)
            }
            _ => IdValue::Str(s),
        });
    }
    if let Some(v) = lx.plain_int() {
        return Ok(IdValue::Int(v));
    }
    let (s, e) = lx.scalar()?;
    match parse_i64(&lx.buf[s..e]) {
        Some(v) => Ok(IdValue::Int(v)),
        None => {
            defects.bare_token = true;
            Ok(IdValue::None)
        }
    }
}

fn int_arg(lx: &mut Lexer<'_>, bare: &mut bool) -> Lex<Option<i64>> {
    match lx.peek()? {
        b'"' => {
            let s = lx.string()?;
            Ok(parse_i64(&lx.buf[s.start..s.end]))
        }
        b'{' | b'[' => {
            lx.skip_value(bare)?;
            Ok(None)
        }
        _ => {
            if let Some(v) = lx.plain_int() {
                return Ok(Some(v));
            }
            let (s, e) = lx.scalar()?;
            let v = parse_i64(&lx.buf[s..e]);
            if v.is_none() && !super::lexer::is_json_scalar(&lx.buf[s..e]) {
                *bare = true;
            }
            Ok(v)
        }
    }
}

/// An unsigned 64-bit integer argument (a hash such as `Comms Id`, which can exceed
/// `i64::MAX`), as a number or a string of digits.
fn u64_arg(lx: &mut Lexer<'_>, bare: &mut bool) -> Lex<Option<u64>> {
    let digits = |b: &[u8]| std::str::from_utf8(b).ok()?.parse::<u64>().ok();
    match lx.peek()? {
        b'"' => {
            let s = lx.string()?;
            Ok(digits(&lx.buf[s.start..s.end]))
        }
        b'{' | b'[' => {
            lx.skip_value(bare)?;
            Ok(None)
        }
        _ => {
            let (s, e) = lx.scalar()?;
            let v = digits(&lx.buf[s..e]);
            if v.is_none() && !super::lexer::is_json_scalar(&lx.buf[s..e]) {
                *bare = true;
            }
            Ok(v)
        }
    }
}

fn float_arg(lx: &mut Lexer<'_>, bare: &mut bool) -> Lex<Option<f32>> {
    match lx.peek()? {
        b'"' => {
            // "inf" (unknown SM count) or "N/A": unknown.
            lx.string()?;
            Ok(None)
        }
        b'{' | b'[' => {
            lx.skip_value(bare)?;
            Ok(None)
        }
        _ => {
            if let Some(v) = lx.plain_float() {
                return Ok(Some(v as f32));
            }
            let (s, e) = lx.scalar()?;
            let v = parse_f64(&lx.buf[s..e])
                .filter(|f| f.is_finite())
                .map(|f| f as f32);
            if !super::lexer::is_json_scalar(&lx.buf[s..e]) {
                *bare = true;
            }
            Ok(v)
        }
    }
}

/// A kernel's `grid` or `block`: `[x, y, z]`. Three plain integers are read in place;
/// anything else (other counts, signs, strings, nesting) is skipped as a value and read
/// from its text, each part that is not an integer as 0.
fn dim3_arg(lx: &mut Lexer<'_>, bare: &mut bool) -> Lex<Option<[u32; 3]>> {
    let start = lx.pos;
    if let Some(dims) = plain_dim3(lx) {
        return Ok(Some(dims));
    }
    lx.pos = start;
    let (s, e) = lx.skip_value(bare)?;
    let text = &lx.buf[s..e];
    if text.first() != Some(&b'[') {
        return Ok(None);
    }
    let mut out = [0u32; 3];
    for (slot, part) in out
        .iter_mut()
        .zip(text[1..text.len() - 1].split(|&b| b == b','))
    {
        *slot = parse_i64(part.trim_ascii()).unwrap_or(0).max(0) as u32;
    }
    Ok(Some(out))
}

/// `[x, y, z]` of three plain non-negative integers (any whitespace between), the lexer
/// moved past it; `None` for anything else, the lexer left anywhere in it.
#[inline]
fn plain_dim3(lx: &mut Lexer<'_>) -> Option<[u32; 3]> {
    lx.peek().ok().filter(|&b| b == b'[')?;
    lx.pos += 1;
    let mut out = [0u32; 3];
    for (k, slot) in out.iter_mut().enumerate() {
        *slot = lx.plain_int()? as u32;
        let want = if k == 2 { b']' } else { b',' };
        lx.peek().ok().filter(|&b| b == want)?;
        lx.pos += 1;
    }
    Some(out)
}

fn opt_str(lx: &mut Lexer<'_>, bare: &mut bool) -> Lex<Option<StrSpan>> {
    if lx.peek()? == b'"' {
        Ok(Some(lx.string()?))
    } else {
        lx.skip_value(bare)?;
        Ok(None)
    }
}

/// Parse an event's `args` object (any other value is skipped), keeping the keys
/// analyses need in `ev.args`.
fn parse_args(lx: &mut Lexer<'_>, ev: &mut RawEvent) -> Lex<()> {
    if lx.peek()? != b'{' {
        let mut bare = false;
        lx.skip_value(&mut bare)?;
        ev.defects.bare_token |= bare;
        return Ok(());
    }
    lx.pos += 1;
    if lx.peek()? == b'}' {
        lx.pos += 1;
        return Ok(());
    }
    let mut bare = false;
    loop {
        let key = lx.string()?;
        lx.expect(b':', "expected `:` after an argument name")?;
        arg_value(lx, key, &mut ev.args, &mut bare)?;
        match lx.peek()? {
            b',' => {
                lx.pos += 1;
                if lx.peek()? == b'}' {
                    lx.pos += 1;
                    break;
                }
            }
            b'}' => {
                lx.pos += 1;
                break;
            }
            _ => return Err(LexError::Bad("expected `,` or `}` in args")),
        }
    }
    ev.defects.bare_token |= bare;
    Ok(())
}

/// `v`, once `group` is marked as touched (so that the next event clears it).
#[inline(always)]
fn touch<T>(touched: &mut u8, group: u8, v: T) -> T {
    *touched |= group;
    v
}

/// Read the value of the argument named by `key` into `a` when analyses need it;
/// skip it otherwise.
#[inline(always)]
fn arg_value(lx: &mut Lexer<'_>, key: StrSpan, a: &mut ArgsScratch, bare: &mut bool) -> Lex<()> {
    let t = &mut a.touched;
    match &lx.buf[key.start..key.end] {
        b"External id" | b"external id" => a.external_id = int_arg(lx, bare)?,
        b"correlation" => a.correlation = int_arg(lx, bare)?,
        // A kernel's launch.
        b"device" | b"toDevice" => a.device = touch(t, KERNEL, int_arg(lx, bare)?),
        b"stream" => a.stream = touch(t, KERNEL, int_arg(lx, bare)?),
        b"grid" => a.grid = touch(t, KERNEL, dim3_arg(lx, bare)?),
        b"block" => a.block = touch(t, KERNEL, dim3_arg(lx, bare)?),
        b"registers per thread" => {
            a.registers = touch(t, KERNEL, int_arg(lx, bare)?.map(|v| v.max(0) as u32))
        }
        b"shared memory" => {
            a.shared_memory = touch(t, KERNEL, int_arg(lx, bare)?.map(|v| v.max(0) as u64))
        }
        b"blocks per SM" => a.blocks_per_sm = touch(t, KERNEL, float_arg(lx, bare)?),
        b"warps per SM" => a.warps_per_sm = touch(t, KERNEL, float_arg(lx, bare)?),
        b"est. achieved occupancy %" => {
            a.occupancy = touch(t, KERNEL, float_arg(lx, bare)?.filter(|v| *v >= 0.0))
        }
        b"bytes" | b"Bytes" => a.bytes = int_arg(lx, bare)?,
        // An operator's shapes, stack and module.
        b"Input Dims" | b"Input dims" => a.input_dims = touch(t, OP, Some(lx.skip_value(bare)?)),
        b"Input type" => a.input_types = touch(t, OP, Some(lx.skip_value(bare)?)),
        b"Input Strides" => a.input_strides = touch(t, OP, Some(lx.skip_value(bare)?)),
        b"Concrete Inputs" => a.concrete_inputs = touch(t, OP, Some(lx.skip_value(bare)?)),
        b"Call stack" => a.call_stack = touch(t, OP, opt_str(lx, bare)?),
        b"Module Hierarchy" => a.module_hierarchy = touch(t, OP, opt_str(lx, bare)?),
        b"Sequence number" => a.sequence_number = touch(t, OP, int_arg(lx, bare)?),
        b"Fwd thread id" => a.fwd_thread_id = touch(t, OP, int_arg(lx, bare)?),
        // A `[memory]` instant.
        b"Addr" => a.addr = touch(t, MEMORY, int_arg(lx, bare)?.map(|v| v as u64)),
        b"Total Allocated" => a.total_allocated = touch(t, MEMORY, int_arg(lx, bare)?),
        b"Total Reserved" => a.total_reserved = touch(t, MEMORY, int_arg(lx, bare)?),
        b"Device Type" => a.device_type = touch(t, MEMORY, int_arg(lx, bare)?),
        b"Device Id" => a.device_id = touch(t, MEMORY, int_arg(lx, bare)?),
        // A collective.
        b"Collective name" => a.collective_name = touch(t, COLLECTIVE, opt_str(lx, bare)?),
        b"dtype" => a.dtype = touch(t, COLLECTIVE, opt_str(lx, bare)?),
        b"In msg nelems" => a.in_msg_nelems = touch(t, COLLECTIVE, int_arg(lx, bare)?),
        b"Out msg nelems" => a.out_msg_nelems = touch(t, COLLECTIVE, int_arg(lx, bare)?),
        b"Group size" => a.group_size = touch(t, COLLECTIVE, int_arg(lx, bare)?),
        b"Process Group Name" | b"Process Group ID" => {
            a.pg_name = touch(t, COLLECTIVE, Some(lx.skip_value(bare)?))
        }
        b"Process Group Description" => a.pg_desc = touch(t, COLLECTIVE, opt_str(lx, bare)?),
        b"Process Group Ranks" => a.pg_ranks = touch(t, COLLECTIVE, Some(lx.skip_value(bare)?)),
        b"Seq" => a.seq = touch(t, COLLECTIVE, int_arg(lx, bare)?),
        b"Comms Id" => a.comms_id = touch(t, COLLECTIVE, u64_arg(lx, bare)?),
        // A Python frame (`with_stack`).
        b"Python id" => a.python_id = touch(t, PYTHON, int_arg(lx, bare)?),
        b"Python parent id" => a.python_parent_id = touch(t, PYTHON, int_arg(lx, bare)?),
        b"Python module id" => a.python_module_id = touch(t, PYTHON, int_arg(lx, bare)?),
        // A metadata event's text.
        b"name" | b"labels" => a.meta_text = opt_str(lx, bare)?,
        // Keys whose presence only is noted.
        b"Ev Idx" => {
            a.saw_ev_idx = true;
            lx.skip_value(bare)?;
        }
        b"Profiler Event Index" => {
            a.saw_profiler_event_index = true;
            lx.skip_value(bare)?;
        }
        b"Record function id" => {
            a.saw_record_function_id = true;
            lx.skip_value(bare)?;
        }
        _ => {
            lx.skip_value(bare)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments of one event never leak into the next, whichever groups were set.
    #[test]
    fn reset_clears_every_argument_group() {
        let text = br#"{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "args": {"device": 3, "grid": [1, 2, 3], "Input Dims": [[1]], "Addr": 9, "Collective name": "allreduce", "Python id": 4, "External id": 5}}"#;
        let mut ev = RawEvent::default();
        parse_event(&mut Lexer::new(text, 0), &mut ev).unwrap();
        assert_eq!(ev.args.device, Some(3));
        assert!(ev.args.input_dims.is_some() && ev.args.addr.is_some());
        ev.reset();
        let next = br#"{"ph": "X", "cat": "kernel", "name": "k2", "ts": 1, "dur": 2, "args": {"stream": 7}}"#;
        parse_event(&mut Lexer::new(next, 0), &mut ev).unwrap();
        let a = &ev.args;
        assert_eq!((a.device, a.stream, a.grid), (None, Some(7), None));
        assert!(a.input_dims.is_none() && a.addr.is_none() && a.collective_name.is_none());
        assert!(a.python_id.is_none() && a.external_id.is_none());
    }

    /// `grid` and `block` read in place give what the value's text gives, however the
    /// array is written, and leave the lexer just past it; what is not three plain
    /// integers takes the general path, and a cut array is out of input on both.
    #[test]
    fn grid_and_block_read_alike_however_written() {
        let by_text = |text: &[u8]| {
            let inner = &text[1..text.len() - 1];
            let mut out = [0u32; 3];
            for (slot, part) in out.iter_mut().zip(inner.split(|&b| b == b',')) {
                *slot = parse_i64(part.trim_ascii()).unwrap_or(0).max(0) as u32;
            }
            out
        };
        let cases: [&[u8]; 12] = [
            b"[1, 2, 3]",
            b"[17888,1,1]",
            b"[\n          17888,\n          1,\n          1\n        ]",
            b"[ 128 , 1 , 1 ]",
            b"[4294967297, 0, 9999999999999999]",
            b"[1, 2]",
            b"[1, 2, 3, 4]",
            b"[-1, 2, 3]",
            b"[1.5, 2, 3]",
            b"[\"1\", 2, 3]",
            b"[1e3, 2, 3]",
            b"[]",
        ];
        for case in cases {
            let text = [case, &b", \"next\": 1"[..]].concat();
            let mut lx = Lexer::new(&text, 0);
            let got = dim3_arg(&mut lx, &mut false).unwrap();
            assert_eq!(
                got,
                Some(by_text(case)),
                "{}",
                String::from_utf8_lossy(case)
            );
            assert_eq!(lx.pos, case.len(), "{}", String::from_utf8_lossy(case));
        }
        let mut lx = Lexer::new(b"7,", 0);
        assert_eq!(dim3_arg(&mut lx, &mut false), Ok(None));
        for cut in [&b"[1, 2, 3"[..], b"[1, 2", b"[1"] {
            let mut lx = Lexer::new(cut, 0);
            assert_eq!(dim3_arg(&mut lx, &mut false), Err(LexError::Eof));
        }
    }

    /// The keys read from one 8-byte load give what the lexer gives: the same event
    /// compact, spaced, with an escaped key, and cut so that keys fall within the last
    /// eight bytes of the buffer.
    #[test]
    fn event_keys_read_alike_however_written() {
        let fields = |text: &[u8]| {
            let mut ev = RawEvent::default();
            parse_event(&mut Lexer::new(text, 0), &mut ev).unwrap();
            let span = |s: Option<StrSpan>| s.map(|s| text[s.start..s.end].to_vec());
            let id = |v: IdValue| match v {
                IdValue::Int(i) => i,
                _ => -1,
            };
            (
                ev.ph,
                span(ev.cat),
                span(ev.name),
                id(ev.pid),
                id(ev.tid),
                ev.ts_ns,
                ev.dur_ns,
                ev.id,
                ev.args.external_id,
            )
        };
        let compact = br#"{"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":3.5,"dur":4,"id":5,"args":{"External id":6}}"#;
        let want = fields(compact);
        assert_eq!(want.0, b'X');
        assert_eq!(
            (want.5, want.6, want.7, want.8),
            (Some(3500), 4000, Some(5), Some(6))
        );
        let spaced = br#"{ "ph" : "X", "cat" :"c", "name": "n", "pid"	:1, "tid":2, "ts" : 3.5, "dur":4, "id" :5, "args" : {"External id": 6} }"#;
        assert_eq!(fields(spaced), want);
        // An escaped key is not the key it spells: it is skipped, by both paths.
        let escaped = br#"{"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":3.5,"dur":4,"id":5,"args":{"External id":6},"p\u0068":"Y"}"#;
        assert_eq!(fields(escaped), want);
        // Keys that are near-misses of the known ones are skipped.
        let near = br#"{"phx":"Y","ca":"d","names":"m","ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":3.5,"dur":4,"id":5,"args":{"External id":6},"ids":9,"tsx":1}"#;
        assert_eq!(fields(near), want);
        // The short keys last, so that fewer than eight bytes follow them.
        let tail = br#"{"args":{"External id":6},"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":3.5,"dur":4,"id":5}"#;
        assert_eq!(fields(tail), want);
        // A trailing comma is tolerated, spaced or not, at the buffer's end or not; the
        // lexer stops just past the event.
        let event = br#"{"args":{"External id":6},"ph":"X","cat":"c","name":"n","pid":1,"tid":2,"ts":3.5,"dur":4,"id":5"#;
        for (close, after) in [(&b",}"[..], &b""[..]), (b" , }", b", {\"ph\":\"X\"}")] {
            let text = [&event[..], close, after].concat();
            assert_eq!(fields(&text), want);
            let mut lx = Lexer::new(&text, 0);
            parse_event(&mut lx, &mut RawEvent::default()).unwrap();
            assert_eq!(lx.pos, event.len() + close.len());
        }
        // Two commas, or a comma right after the brace, are still malformed.
        for text in [&br#"{"ph":"X",,}"#[..], br#"{,"ph":"X"}"#] {
            let got = parse_event(&mut Lexer::new(text, 0), &mut RawEvent::default());
            assert!(matches!(got, Err(LexError::Bad(_))), "{got:?}");
        }
    }
}
