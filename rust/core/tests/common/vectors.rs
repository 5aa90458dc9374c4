//! The SSE vectors of `tests/fixtures/sse/vectors.json`, the one file the Rust and Python
//! framing tests share (its README says where each vector comes from).

use serde_json::Value;

use super::{Outcome, conformant_chunks};
use msgwire_core::sse::Pending;

/// One vector: its name, the chunks a suite fed, and what must come out (`None`: not checked).
pub struct Vector {
    pub name: String,
    pub chunks: Vec<Vec<u8>>,
    expect: Value,
}

fn file() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/sse/vectors.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("vectors.json is JSON")
}

/// A chunk: UTF-8 text, or a list of parts that are text, `{"hex"}` or `{"repeat", "count"}`.
fn chunk_bytes(chunk: &Value) -> Vec<u8> {
    match chunk {
        Value::String(text) => text.as_bytes().to_vec(),
        Value::Array(parts) => parts.iter().flat_map(part_bytes).collect(),
        other => panic!("not a chunk: {other}"),
    }
}

fn part_bytes(part: &Value) -> Vec<u8> {
    if let Some(text) = part.as_str() {
        return text.as_bytes().to_vec();
    }
    if let Some(hex) = part["hex"].as_str() {
        return (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex")).collect();
    }
    let unit = part["repeat"].as_str().expect("a part is text, hex or repeat");
    unit.repeat(usize::try_from(part["count"].as_u64().expect("count")).expect("fits")).into_bytes()
}

/// Every vector of the file.
pub fn vectors() -> Vec<Vector> {
    let doc = file();
    let all = doc["vectors"].as_array().expect("a vectors list");
    all.iter()
        .map(|v| Vector {
            name: v["name"].as_str().expect("a name").to_owned(),
            chunks: v["chunks"].as_array().expect("chunks").iter().map(chunk_bytes).collect(),
            expect: v["expect"].clone(),
        })
        .collect()
}

/// The vector named `name`.
pub fn vector(name: &str) -> Vector {
    vectors().into_iter().find(|v| v.name == name).unwrap_or_else(|| panic!("no vector {name}"))
}

/// The alphabet the random-stream tests build bodies from.
pub fn random_pieces() -> Vec<Vec<u8>> {
    file()["random_pieces"].as_array().expect("random_pieces").iter().map(chunk_bytes).collect()
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().expect("a list").iter().map(|s| s.as_str().expect("a string").to_owned()).collect()
}

impl Vector {
    /// The whole body.
    pub fn body(&self) -> Vec<u8> {
        self.chunks.concat()
    }

    /// The expected end state, if the vector gives one.
    pub fn pending(&self) -> Option<Pending> {
        let pending = self.expect.get("pending")?;
        Some(Pending {
            partial_line: pending["partial_line"].as_bool().expect("partial_line"),
            undispatched: pending["undispatched"].as_u64(),
        })
    }

    /// Feed the chunks as given, whole and under every splitting; check every expectation the
    /// vector states; return the outcome.
    pub fn check(&self) -> Outcome {
        let chunks: Vec<&[u8]> = self.chunks.iter().map(Vec::as_slice).collect();
        let out = conformant_chunks(&chunks);
        let name = &self.name;
        let e = &self.expect;
        if let Some(pairs) = e.get("pairs") {
            let want: Vec<(String, String)> = pairs
                .as_array()
                .expect("pairs")
                .iter()
                .map(|p| match strings(p).as_slice() {
                    [event, data] => (event.clone(), data.clone()),
                    other => panic!("{name}: a pair is two strings, not {other:?}"),
                })
                .collect();
            let got: Vec<(String, String)> =
                out.pairs().iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
            assert_eq!(got, want, "{name}: pairs");
        }
        if let Some(data) = e.get("data") {
            assert_eq!(out.data(), strings(data), "{name}: data");
        }
        if let Some(ids) = e.get("ids") {
            assert_eq!(out.ids(), strings(ids), "{name}: ids");
        }
        if let Some(retries) = e.get("retries") {
            let want: Vec<Option<u64>> = retries.as_array().expect("retries").iter().map(Value::as_u64).collect();
            assert_eq!(out.events.iter().map(|ev| ev.retry).collect::<Vec<_>>(), want, "{name}: retries");
        }
        if let Some(id) = e.get("last_event_id") {
            assert_eq!(out.last_event_id, id.as_str().expect("a string"), "{name}: last event id");
        }
        if let Some(time) = e.get("reconnection_time") {
            assert_eq!(out.reconnection_time, time.as_u64(), "{name}: reconnection time");
        }
        if let Some(comments) = e.get("comments") {
            assert_eq!(Some(out.comments), comments.as_u64(), "{name}: comments");
        }
        if let Some(pending) = self.pending() {
            assert_eq!(out.pending, Some(pending), "{name}: end state");
        }
        assert!(out.events.iter().all(|ev| !ev.event.is_empty()), "{name}: an event type is never empty");
        out
    }
}
