//! Protobuf wire encoding, the few pieces the writer needs: varints, 64-bit fixed
//! values and length-delimited fields (strings and nested messages).

/// Wire type of varints.
const VARINT: u64 = 0;
/// Wire type of 64-bit fixed values.
const FIXED64: u64 = 1;
/// Wire type of length-delimited values.
const LEN: u64 = 2;

/// A message being encoded.
#[derive(Default)]
pub struct Message {
    /// The encoded fields.
    pub bytes: Vec<u8>,
}

/// Append `v` as a base-128 varint.
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Message {
    fn key(&mut self, field: u32, wire: u64) {
        varint(&mut self.bytes, (u64::from(field) << 3) | wire);
    }

    /// An unsigned integer, enum or bool field.
    pub fn uint(&mut self, field: u32, v: u64) -> &mut Self {
        self.key(field, VARINT);
        varint(&mut self.bytes, v);
        self
    }

    /// A signed (`int32` / `int64`, not `sint`) field: two's complement in ten bytes
    /// when negative.
    pub fn int(&mut self, field: u32, v: i64) -> &mut Self {
        self.uint(field, v as u64)
    }

    /// A `fixed64` field.
    pub fn fixed64(&mut self, field: u32, v: u64) -> &mut Self {
        self.key(field, FIXED64);
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A `bytes` or `string` field.
    pub fn bytes(&mut self, field: u32, v: &[u8]) -> &mut Self {
        self.key(field, LEN);
        varint(&mut self.bytes, v.len() as u64);
        self.bytes.extend_from_slice(v);
        self
    }

    /// A `string` field.
    pub fn string(&mut self, field: u32, v: &str) -> &mut Self {
        self.bytes(field, v.as_bytes())
    }

    /// A nested message field, built by `build`.
    pub fn message(&mut self, field: u32, build: impl FnOnce(&mut Message)) -> &mut Self {
        let mut inner = Message::default();
        build(&mut inner);
        self.bytes(field, &inner.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_follow_the_wire_format() {
        // The examples of the protobuf encoding guide: 150 is 96 01; field 1 = 150 is
        // 08 96 01; field 2 = "testing" is 12 07 74 65 73 74 69 6e 67.
        let mut m = Message::default();
        m.uint(1, 150).string(2, "testing");
        assert_eq!(
            m.bytes,
            [0x08, 0x96, 0x01, 0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g']
        );
        let mut n = Message::default();
        n.int(1, -1);
        assert_eq!(n.bytes.len(), 1 + 10, "negative int64 takes ten bytes");
        let mut f = Message::default();
        f.fixed64(47, 1);
        assert_eq!(f.bytes, [0xf9, 0x02, 1, 0, 0, 0, 0, 0, 0, 0]);
    }
}
