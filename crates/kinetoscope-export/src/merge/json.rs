//! The merged timeline as Chrome trace JSON, streamed event by event: metadata naming
//! each rank's process and threads, then each rank's spans and instants in model order
//! (`ts`/`dur` in µs with three decimals, exact from the model's integer ns, minus the
//! rank's clock offset), then its launch → GPU flows (`s` / `f` pairs, ids numbered
//! across all ranks). Args: the CUPTI correlation and `External id`, kernel launch
//! geometry and operator input shapes where the model has them.

use std::io::{self, BufWriter, Write};

use kinetoscope_trace::{EventId, Phase, Trace};

use super::MergeStats;
use crate::layout::{is_written, launch_flows, layout, MergeInput, RankOut};

/// Write `inputs` as one Chrome trace JSON document to `out`.
pub fn write_json(inputs: &[MergeInput<'_>], out: impl Write) -> io::Result<MergeStats> {
    let ranks = layout(inputs);
    let mut w = Json {
        out: BufWriter::with_capacity(1 << 20, out),
        buf: Vec::with_capacity(4096),
        first: true,
    };
    w.out
        .write_all(b"{\"displayTimeUnit\":\"ms\",\"otherData\":")?;
    write_other_data(&mut w.out, inputs)?;
    w.out.write_all(b",\"traceEvents\":[\n")?;
    let mut stats = MergeStats::default();
    let mut next_flow = 1u64;
    for (input, rank) in inputs.iter().zip(&ranks) {
        w.metadata(rank, input.rank)?;
        let trace = input.trace;
        for e in trace.events.ids() {
            if is_written(trace, e) {
                w.event(input, rank, e)?;
                stats.events += 1;
            }
        }
        for (launch, gpu) in launch_flows(trace) {
            w.flow(input, rank, launch, next_flow, true)?;
            w.flow(input, rank, gpu, next_flow, false)?;
            next_flow += 1;
            stats.flows += 1;
        }
    }
    w.out.write_all(b"\n]}\n")?;
    w.out.flush()?;
    Ok(stats)
}

/// Which file each rank came from and the offset applied to it.
fn write_other_data(out: &mut impl Write, inputs: &[MergeInput<'_>]) -> io::Result<()> {
    let ranks: Vec<serde_json::Value> = inputs
        .iter()
        .map(|i| {
            serde_json::json!({
                "rank": i.rank,
                "pid": i.rank + 1,
                "file": i.trace.path.display().to_string(),
                "clock_offset_ns": i.offset_ns,
            })
        })
        .collect();
    let doc = serde_json::json!({ "merged_by": "kinetoscope merge", "ranks": ranks });
    serde_json::to_writer(out, &doc).map_err(io::Error::from)
}

struct Json<W: Write> {
    out: BufWriter<W>,
    /// One event's text, reused.
    buf: Vec<u8>,
    first: bool,
}

impl<W: Write> Json<W> {
    /// Write the event in `buf`, with a separator before all but the first.
    fn emit(&mut self) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// The process's name, label and order, and each thread's name and order.
    fn metadata(&mut self, rank: &RankOut, rank_no: i64) -> io::Result<()> {
        let pid = rank.pid;
        let process = [
            ("process_name", "name", Value::Str(&rank.name)),
            ("process_labels", "labels", Value::Str(&rank.label)),
            ("process_sort_index", "sort_index", Value::Int(rank_no)),
        ];
        for (name, key, value) in process {
            self.meta(name, pid, None, key, value)?;
        }
        for (i, t) in rank.tracks.iter().enumerate() {
            self.meta("thread_name", pid, Some(t.tid), "name", Value::Str(&t.name))?;
            let order = Value::Int(i as i64);
            self.meta("thread_sort_index", pid, Some(t.tid), "sort_index", order)?;
        }
        Ok(())
    }

    fn meta(
        &mut self,
        name: &str,
        pid: i64,
        tid: Option<i64>,
        key: &str,
        value: Value<'_>,
    ) -> io::Result<()> {
        let b = &mut self.buf;
        write!(b, "{{\"ph\":\"M\",\"name\":\"{name}\",\"pid\":{pid}")?;
        if let Some(tid) = tid {
            write!(b, ",\"tid\":{tid}")?;
        }
        write!(b, ",\"args\":{{\"{key}\":")?;
        value.write(b)?;
        b.extend_from_slice(b"}}");
        self.emit()
    }

    fn event(&mut self, input: &MergeInput<'_>, rank: &RankOut, e: EventId) -> io::Result<()> {
        let trace = input.trace;
        let ev = &trace.events;
        let i = e.index();
        let tid = tid_of(rank, trace, e);
        let b = &mut self.buf;
        let instant = ev.phase[i] == Phase::Instant;
        b.extend_from_slice(if instant {
            b"{\"ph\":\"i\",\"s\":\"t\",\"name\":"
        } else {
            b"{\"ph\":\"X\",\"name\":"
        });
        string(b, trace.name(e))?;
        b.extend_from_slice(b",\"cat\":");
        string(b, &trace.categories.get(ev.cat[i]).raw)?;
        write!(b, ",\"pid\":{},\"tid\":{tid},\"ts\":", rank.pid)?;
        micros(b, ev.ts_ns[i] - input.offset_ns)?;
        if !instant {
            b.extend_from_slice(b",\"dur\":");
            micros(b, ev.dur_ns.at(i))?;
        }
        write_args(b, trace, e)?;
        b.push(b'}');
        self.emit()
    }

    /// One end of a launch → GPU flow: `s` on the launch, `f` (binding to the slice it
    /// lands on) on the GPU activity.
    fn flow(
        &mut self,
        input: &MergeInput<'_>,
        rank: &RankOut,
        e: EventId,
        id: u64,
        start: bool,
    ) -> io::Result<()> {
        let trace = input.trace;
        let tid = tid_of(rank, trace, e);
        let b = &mut self.buf;
        let ph = if start { "s" } else { "f\",\"bp\":\"e" };
        write!(
            b,
            "{{\"ph\":\"{ph}\",\"name\":\"launch\",\"cat\":\"ac2g\",\"id\":{id},\"pid\":{},\"tid\":{tid},\"ts\":",
            rank.pid
        )?;
        micros(b, trace.events.ts_ns[e.index()] - input.offset_ns)?;
        b.push(b'}');
        self.emit()
    }
}

/// The output thread of an event (every written event's track has one).
fn tid_of(rank: &RankOut, trace: &Trace, e: EventId) -> i64 {
    let track = trace.events.track[e.index()].index();
    rank.by_track[track].map_or(0, |t| rank.tracks[t].tid)
}

/// A metadata value.
enum Value<'a> {
    Str(&'a str),
    Int(i64),
}

impl Value<'_> {
    fn write(&self, b: &mut Vec<u8>) -> io::Result<()> {
        match self {
            Value::Str(s) => string(b, s),
            Value::Int(i) => write!(b, "{i}"),
        }
    }
}

/// `text` as a JSON string, every control character escaped.
fn string(b: &mut Vec<u8>, text: &str) -> io::Result<()> {
    serde_json::to_writer(b, text).map_err(io::Error::from)
}

/// `ns` as microseconds with three decimals, exactly.
pub(crate) fn micros(b: &mut Vec<u8>, ns: i64) -> io::Result<()> {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    write!(b, "{sign}{}.{:03}", abs / 1000, abs % 1000)
}

/// The args the model keeps for an event, when it has any.
fn write_args(b: &mut Vec<u8>, trace: &Trace, e: EventId) -> io::Result<()> {
    let ev = &trace.events;
    let i = e.index();
    let mut fields: Vec<(&str, String)> = Vec::new();
    if ev.correlation.at(i) != 0 {
        fields.push(("correlation", ev.correlation.at(i).to_string()));
    }
    if ev.external_id.at(i) != 0 {
        fields.push(("External id", ev.external_id.at(i).to_string()));
    }
    if let Some(k) = trace.args.kernel_of(e).map(|k| k.launch) {
        fields.push(("device", k.device.to_string()));
        fields.push(("stream", k.stream.to_string()));
        fields.push(("grid", format!("{:?}", k.grid)));
        fields.push(("block", format!("{:?}", k.block)));
        fields.push(("registers per thread", k.registers_per_thread.to_string()));
        fields.push(("shared memory", k.shared_memory.to_string()));
    }
    let mut dims = None;
    if let Some(op) = trace.args.op_of(e) {
        let text = trace.strings.get(op.input_dims);
        if !text.is_empty() {
            dims = Some(text);
        }
    }
    if fields.is_empty() && dims.is_none() {
        return Ok(());
    }
    b.extend_from_slice(b",\"args\":{");
    let mut first = true;
    for (key, number) in &fields {
        if !first {
            b.push(b',');
        }
        first = false;
        string(b, key)?;
        // Numbers and arrays of numbers, written by this function.
        write!(b, ":{number}")?;
    }
    if let Some(text) = dims {
        if !first {
            b.push(b',');
        }
        // The recorded text, as a string: it is the file's, not checked JSON.
        b.extend_from_slice(b"\"Input Dims\":");
        string(b, text)?;
    }
    b.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::micros;

    #[test]
    fn micros_are_exact_with_three_decimals() {
        let text = |ns| {
            let mut b = Vec::new();
            micros(&mut b, ns).unwrap();
            String::from_utf8(b).unwrap()
        };
        assert_eq!(text(1_700_000_000_123_456_789), "1700000000123456.789");
        assert_eq!(text(5), "0.005");
        assert_eq!(text(-1_500), "-1.500");
        assert_eq!(text(0), "0.000");
    }
}
