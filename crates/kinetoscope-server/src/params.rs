//! A request's target: its path split into decoded segments and its query parameters,
//! each read once and checked; a parameter the endpoint does not know is a 400.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Parameters every endpoint accepts.
const ALWAYS: [&str; 1] = ["token"];

/// A request target, decoded.
#[derive(Debug)]
pub struct Target {
    /// Path segments, percent-decoded.
    pub segments: Vec<String>,
    /// Query parameters, percent-decoded (the first of repeated names).
    pub query: Query,
}

impl Target {
    /// Split and decode `target` (`/a/b?x=1`); `None` when a part does not decode.
    pub fn parse(target: &str) -> Result<Self, ApiError> {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let bad = || ApiError::bad_request("malformed request target");
        let segments = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| decode(s).ok_or_else(bad))
            .collect::<Result<Vec<_>, _>>()?;
        let mut params = BTreeMap::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let k = decode(k).ok_or_else(bad)?;
            let v = decode(v).ok_or_else(bad)?;
            params.entry(k).or_insert(v);
        }
        Ok(Self {
            segments,
            query: Query(params),
        })
    }
}

/// Query parameters.
#[derive(Debug, Default)]
pub struct Query(BTreeMap<String, String>);

impl Query {
    /// The token given in the URL, if any.
    pub fn token(&self) -> Option<&str> {
        self.get("token")
    }

    /// A parameter's text.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Refuse any parameter not in `known` (nor `token`).
    pub fn only(&self, known: &[&str]) -> Result<(), ApiError> {
        match self
            .0
            .keys()
            .find(|k| !known.contains(&k.as_str()) && !ALWAYS.contains(&k.as_str()))
        {
            Some(k) => Err(ApiError::bad_request(format!(
                "unknown parameter {k:?} (this endpoint takes: {})",
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// A parameter parsed with `FromStr`, or `default`.
    pub fn parse<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, ApiError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| ApiError::bad_request(format!("{key}={v:?}: not a valid value"))),
        }
    }

    /// An optional parameter parsed with `FromStr`.
    pub fn parse_opt<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, ApiError> {
        self.get(key)
            .map(|v| {
                v.parse()
                    .map_err(|_| ApiError::bad_request(format!("{key}={v:?}: not a valid value")))
            })
            .transpose()
    }

    /// A parameter naming an enum value as the JSON documents spell it (`snake_case`).
    pub fn enum_value<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ApiError> {
        self.get(key)
            .map(|v| {
                serde_json::from_value(serde_json::Value::String(v.to_owned()))
                    .map_err(|_| ApiError::bad_request(format!("{key}={v:?}: not a valid value")))
            })
            .transpose()
    }

    /// A boolean flag: absent, `false`/`0` → false; present empty, `true`/`1` → true.
    pub fn flag(&self, key: &str) -> Result<bool, ApiError> {
        match self.get(key) {
            None | Some("false" | "0") => Ok(false),
            Some("" | "true" | "1") => Ok(true),
            Some(v) => Err(ApiError::bad_request(format!(
                "{key}={v:?}: not true or false"
            ))),
        }
    }

    /// The parameters in order, but the token: a cache key.
    pub fn key(&self) -> String {
        self.0
            .iter()
            .filter(|(k, _)| !ALWAYS.contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// Percent-decode (and `+` as a space); `None` for a bad escape or text that is not
/// UTF-8.
fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_decode_and_bad_escapes_are_refused() {
        let t = Target::parse("/api/v1/runs/a%2Fb?q=x%20y&top=5&q=ignored").unwrap();
        assert_eq!(t.segments, ["api", "v1", "runs", "a/b"]);
        assert_eq!(t.query.get("q"), Some("x y"));
        assert_eq!(t.query.parse("top", 1usize).unwrap(), 5);
        assert!(Target::parse("/x%zz").is_err());
        assert!(Target::parse("/x%ff").is_err());
        assert!(t.query.only(&["q"]).is_err());
        assert!(t.query.only(&["q", "top"]).is_ok());
    }
}
