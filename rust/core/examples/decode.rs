//! Decode a recorded stream many times, for profiling the decode path alone (`perf record`):
//! `cargo run --release --example decode -- <dialect> <file> [times]`; a dialect named
//! `response-<dialect>` reads the file as a non-streamed response body (`from_response`).

#![allow(clippy::print_stdout)] // its one line of output

use std::time::Instant;

use msgwire_core::assemble::BuilderOptions;
use msgwire_core::response::from_response_json;
use msgwire_core::{DialectName, Limits, StreamDecoder};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let response = args[1].strip_prefix("response-");
    let name = response.unwrap_or(&args[1]);
    let dialect = DialectName::ALL.into_iter().find(|d| d.as_str() == name).expect("a dialect name");
    let body = std::fs::read(&args[2]).expect("a readable file");
    let times: usize = args.get(3).map_or(200, |t| t.parse().expect("a count"));
    let mut runs = Vec::with_capacity(times);
    for _ in 0..times {
        let start = Instant::now();
        if response.is_some() {
            let message = from_response_json(&body, dialect, "id", "2026-01-01T00:00:00Z").expect("a response");
            std::hint::black_box(message);
            runs.push(start.elapsed());
            continue;
        }
        let mut decoder = StreamDecoder::new(
            dialect,
            BuilderOptions {
                id: "id".into(),
                timestamp: "2026-01-01T00:00:00Z".into(),
                provider: dialect.provider().into(),
                record_events: false,
                partial_args: false,
                limits: Limits::default(),
            },
        );
        decoder.feed(&body).expect("decodes");
        decoder.finish().expect("ends");
        std::hint::black_box(decoder.builder().message());
        runs.push(start.elapsed());
    }
    runs.sort();
    let median = runs[runs.len() / 2];
    #[allow(clippy::cast_precision_loss)]
    let rate = body.len() as f64 / median.as_secs_f64() / 1e6;
    println!("{} bytes, median {median:?}, {rate:.0} MB/s", body.len());
}
