//! The bodies of msgwire's fuzz targets, one module per target family.
//!
//! Each `check` takes the fuzzer's bytes and panics when an invariant breaks: never "does not
//! crash" only, but the properties each part of msgwire-core promises (the same result however
//! the input is split, snapshots that are valid JSON, round trips that are exact, ...).
//!
//! Every input starts with a small header read by [`Case::new`]: a mode byte (what limits,
//! what feeding mode: each target gives it its own meaning) and the chunk sizes to split the
//! body at. The rest is the body itself, so a recorded stream with a 4-byte header in front is
//! a good seed (`fuzz/seed.sh` writes them).

#![forbid(unsafe_code)]

pub mod canonical;
pub mod dialect;
pub mod json;
pub mod ndjson;
pub mod partial_json;
pub mod request;
pub mod response;
pub mod sse;
pub mod transcode;

use arbitrary::Unstructured;

/// Most chunk sizes a header can give; they repeat over the body.
const MAX_SIZES: usize = 15;

/// One fuzz input: its mode byte, the body, and the body cut into chunks.
#[derive(Debug)]
pub struct Case<'a> {
    /// Byte 0. Its meaning is the target's (limits, feeding mode...).
    pub mode: u8,
    /// Everything after the header.
    pub body: &'a [u8],
    /// `body` cut into pieces whose sizes repeat the header's sizes, in order. A size of 0 is
    /// an empty chunk (fed as is: feeding nothing must change nothing). No sizes, or only
    /// zeros: the body is one chunk (after the empty ones).
    pub chunks: Vec<&'a [u8]>,
}

impl<'a> Case<'a> {
    /// Header: `[mode] [n: low 4 bits] [n chunk sizes, 0..=255 each]`, then the body.
    pub fn new(data: &'a [u8]) -> Self {
        let mut u = Unstructured::new(data);
        let mode = u.arbitrary::<u8>().unwrap_or(0);
        let count = usize::from(u.arbitrary::<u8>().unwrap_or(0) & 0x0F).min(MAX_SIZES);
        let sizes: Vec<usize> = (0..count).map(|_| usize::from(u.arbitrary::<u8>().unwrap_or(0))).collect();
        let body = u.take_rest();
        Self { mode, body, chunks: cut(body, &sizes) }
    }
}

/// `body` in pieces of `sizes`, repeated (see [`Case::chunks`]).
pub fn cut<'a>(body: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut rest = body;
    if sizes.iter().all(|&s| s == 0) {
        chunks.extend(sizes.iter().map(|_| &body[..0]));
        chunks.push(body);
        return chunks;
    }
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// Whether decoded `text` holds no U+FFFD, so that it is byte for byte what the input held
/// (a check of the offsets the framers report).
fn exact_text(text: &str) -> bool {
    !text.contains('\u{FFFD}')
}
