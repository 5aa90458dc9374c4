//! Framing throughput, ignored by default. Run it in a release build:
//!
//! ```text
//! cargo test --release -p msgwire-core --test throughput -- --ignored --nocapture
//! ```
//!
//! About 50 MB of synthetic events of 100 to 300 bytes, fed in 16 KiB chunks; the best of five
//! runs is reported. The callback only sums lengths, so this is the framer alone.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::XorShift;
use msgwire_core::Error;
use msgwire_core::ndjson::NdjsonParser;
use msgwire_core::sse::SseParser;

const TOTAL: usize = 50_000_000;
const CHUNK: usize = 16 * 1024;

/// A workload: its name, what comes before `data:`, what ends an event, and the framer to run.
type Case = (&'static str, &'static str, &'static str, fn(&[u8]) -> usize);

/// Events like chat-completion chunks, `prefix` + `data: {json}` + `end`, 100 to 300 bytes each.
fn synthetic(prefix: &str, end: &str) -> (Vec<u8>, usize) {
    let mut rng = XorShift::new(42);
    let (mut body, mut events) = (Vec::with_capacity(TOTAL + 512), 0);
    while body.len() < TOTAL {
        let head = format!(
            r#"{prefix}data: {{"id":"chatcmpl-{events}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":""#
        );
        let tail = format!(r#""}},"finish_reason":null}}]}}{end}"#);
        let size = 100 + rng.below(201);
        let filler = size.saturating_sub(head.len() + tail.len());
        body.extend_from_slice(head.as_bytes());
        body.extend((0..filler).map(|i| b"abcdefgh ijklmnop"[i % 17]));
        body.extend_from_slice(tail.as_bytes());
        events += 1;
    }
    (body, events)
}

/// Best time of five runs of `parse` over `body`.
fn best_of_five(body: &[u8], mut parse: impl FnMut(&[u8]) -> usize) -> Duration {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            black_box(parse(black_box(body)));
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn sse(body: &[u8]) -> usize {
    let mut parser = SseParser::default();
    let mut seen = 0;
    for chunk in body.chunks(CHUNK) {
        parser
            .feed(chunk, |event| {
                seen += event.data.len() + event.event.len();
                Ok::<_, Error>(())
            })
            .expect("within limits");
    }
    assert!(parser.finish().is_clean());
    seen
}

fn ndjson(body: &[u8]) -> usize {
    let mut parser = NdjsonParser::default();
    let mut seen = 0;
    for chunk in body.chunks(CHUNK) {
        parser
            .feed(chunk, |line| {
                seen += line.text.len();
                Ok::<_, Error>(())
            })
            .expect("within limits");
    }
    parser.finish(|_| Ok::<_, Error>(())).expect("ok");
    seen
}

#[test]
#[ignore = "a timing run: use a release build, see the module docs"]
#[allow(clippy::print_stderr, clippy::cast_precision_loss)] // printing the figure is the point
fn framing_throughput() {
    let cases: [Case; 4] = [
        ("SSE  data: {json}\\n\\n", "", "\n\n", sse),
        ("SSE  event: x\\ndata: {json}\\n\\n", "event: content_block_delta\n", "\n\n", sse),
        ("SSE  data: {json}\\r\\n\\r\\n", "", "\r\n\r\n", sse),
        ("NDJSON {json}\\n", "", "\n", ndjson),
    ];
    for (name, prefix, end, parse) in cases {
        let (mut body, events) = synthetic(prefix, end);
        if name.starts_with("NDJSON") {
            body = String::from_utf8(body).expect("utf-8").replace("data: ", "").into_bytes();
        }
        let time = best_of_five(&body, parse);
        let gbps = body.len() as f64 / time.as_secs_f64() / 1e9;
        let per_event = time.as_nanos() as f64 / events as f64;
        eprintln!(
            "{name:<36} {:>5.1} MB, {events} events: {gbps:.2} GB/s, {per_event:.0} ns/event",
            body.len() as f64 / 1e6
        );
    }
}
