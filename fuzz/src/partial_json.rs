//! `partial_json`: the incremental parser ([`PartialJson`]) and the validator ([`validate`]).
//!
//! Mode byte: bit 0 feeds `&str` fragments (the body made UTF-8, cut at character boundaries)
//! instead of raw bytes; bits 1-2 pick `max_depth` (200, 2, 16, 128); bit 3 caps `max_size` at
//! 64 bytes.
//!
//! Invariants:
//! - every snapshot is valid JSON for [`validate`] (and for `serde_json`, but for numbers out of
//!   its range), and each one, less its closing tail, is a prefix of the next;
//! - once failed, the parser stays failed: the same error, the same snapshot;
//! - `finish` says what [`validate`] says of the whole text (error and offset included), and
//!   `is_complete` agrees with it;
//! - fed whole or in fragments, the parser ends with the same snapshot and result;
//! - a complete document's snapshot is the same JSON value as the document (its numbers the same
//!   text);
//! - [`validate`] accepts what `serde_json` accepts, but for its depth and number range limits.

use std::borrow::Cow;

use msgwire_core::ErrorKind;
use msgwire_core::partial::{JsonLimits, PartialJson, validate, validate_bytes};
use serde_json::Value;

use crate::Case;
use crate::json::Json;

/// The limits the mode byte selects.
pub fn limits(mode: u8) -> JsonLimits {
    let max_depth = [200, 2, 16, 128][usize::from((mode >> 1) & 3)];
    let max_size = if mode & 8 == 0 { 1 << 20 } else { 64 };
    JsonLimits { max_depth, max_size }
}

/// The snapshot, if any.
fn snapshot(parser: &PartialJson) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    parser.snapshot_json(&mut out).then_some(out)
}

/// Whether `serde_json` refused `text` for a limit of its own (not for its syntax).
fn serde_limit(err: &serde_json::Error) -> bool {
    let text = err.to_string();
    text.contains("out of range") || text.contains("recursion limit")
}

/// A snapshot must be JSON, for us and (within its limits) for `serde_json`.
fn check_snapshot(snap: &[u8], limits: JsonLimits) {
    let text = std::str::from_utf8(snap).expect("a snapshot is UTF-8");
    assert_eq!(validate(text, limits.max_depth), Ok(()), "snapshot {text:?}");
    if let Err(err) = serde_json::from_str::<Value>(text) {
        assert!(serde_limit(&err), "serde_json refuses snapshot {text:?}: {err}");
    }
}

/// `text` without what may close it: the `"` and closers a snapshot adds (and perhaps more).
fn open_part(snap: &[u8]) -> &[u8] {
    let end = snap.iter().rposition(|b| !matches!(b, b'"' | b']' | b'}')).map_or(0, |i| i + 1);
    &snap[..end]
}

/// Feed `fragments`, checking every snapshot on the way. Returns the parser.
fn feed_all(fragments: &[&[u8]], as_str: bool, limits: JsonLimits) -> PartialJson {
    let mut parser = PartialJson::new(limits);
    let mut last: Option<Vec<u8>> = None;
    for fragment in fragments {
        let before_error = parser.error().cloned();
        let result = if as_str {
            parser.feed(std::str::from_utf8(fragment).expect("cut at character boundaries"))
        } else {
            parser.feed_bytes(fragment)
        };
        let snap = snapshot(&parser);
        if let Some(err) = before_error {
            assert_eq!(result, Err(err), "a failed parser fails again, the same way");
            assert_eq!(snap, last, "a failed parser keeps its snapshot");
            continue;
        }
        assert_eq!(result.as_ref().err(), parser.error(), "the error is kept");
        if parser.is_empty() {
            assert!(snap.is_none(), "no snapshot of nothing");
        }
        if let Some(snap) = &snap {
            check_snapshot(snap, limits);
            if let Some(last) = &last {
                assert!(snap.starts_with(open_part(last)), "snapshots only grow: {last:?} then {snap:?}");
            }
        } else {
            assert!(last.is_none(), "a snapshot disappeared");
        }
        last = snap;
    }
    parser
}

/// The body cut into `&str` fragments: each chunk end moved to the next character boundary.
fn str_fragments<'a>(text: &'a str, chunks: &[&[u8]]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let (mut start, mut end) = (0, 0);
    for chunk in chunks {
        end += chunk.len();
        let mut stop = end.max(start).min(text.len());
        while !text.is_char_boundary(stop) {
            stop += 1;
        }
        out.push(&text.as_bytes()[start..stop]);
        start = stop;
    }
    if start < text.len() {
        out.push(&text.as_bytes()[start..]);
    }
    out
}

pub fn check(data: &[u8]) {
    let case = Case::new(data);
    let limits = limits(case.mode);
    let as_str = case.mode & 1 == 1;
    let (body, fragments): (Cow<'_, [u8]>, Vec<&[u8]>) = if as_str {
        let text = String::from_utf8_lossy(case.body);
        match text {
            Cow::Borrowed(text) => (Cow::Borrowed(text.as_bytes()), str_fragments(text, &case.chunks)),
            Cow::Owned(_) => return, // only valid UTF-8 comes as `&str`; the bytes mode has the rest
        }
    } else {
        (Cow::Borrowed(case.body), case.chunks.clone())
    };
    let split = feed_all(&fragments, as_str, limits);
    let whole = feed_all(&[&body], as_str, limits);
    assert_eq!(split.finish(), whole.finish(), "split as {fragments:?}");
    assert_eq!(snapshot(&split), snapshot(&whole), "split as {fragments:?}");
    assert_eq!(split.is_complete(), split.finish().is_ok());

    let validated = validate_bytes(&body, limits.max_depth);
    if body.len() <= limits.max_size {
        assert_eq!(whole.finish(), validated, "PartialJson and validate disagree");
    }
    if validated.is_ok() && body.len() <= limits.max_size {
        let snap = snapshot(&whole).expect("a complete document has a snapshot");
        // as `Json` (numbers by their text): `serde_json::Value` would refuse `1e400` and nesting
        // past 128, and see `1.50` and `1.5` as one
        let (doc, snap) = (Json::parse_bytes(&body), Json::parse_bytes(&snap));
        assert_eq!(doc, snap, "the snapshot of a complete document is the document");
    }

    // validate against serde_json, where both have a say.
    let ours = validate_bytes(&body, 128);
    match (serde_json::from_slice::<Value>(&body), ours) {
        (Ok(_), Ok(())) | (Err(_), Err(_)) => {}
        (Err(err), Ok(())) => assert!(serde_limit(&err), "validate accepts what serde_json refuses: {err}"),
        (Ok(_), Err(err)) => {
            assert!(
                matches!(err.kind, ErrorKind::JsonTooDeep { .. }),
                "validate refuses what serde_json accepts: {err}"
            );
        }
    }
}
