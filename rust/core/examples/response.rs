//! Read a response body many times, for profiling the response readers alone:
//! `cargo run --release --example response -- <dialect> <body.json> [times]`.

#![allow(clippy::print_stdout)] // its one line of output

use std::time::Instant;

use msgwire_core::DialectName;
use msgwire_core::response::from_response_json;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dialect = DialectName::ALL.into_iter().find(|d| d.as_str() == args[1]).expect("a dialect name");
    let body = std::fs::read(&args[2]).expect("a readable file");
    let times: usize = args.get(3).map_or(200, |t| t.parse().expect("a count"));
    let mut runs = Vec::with_capacity(times);
    for _ in 0..times {
        let start = Instant::now();
        let message = from_response_json(&body, dialect, "id", "2026-01-01T00:00:00Z").expect("a message");
        std::hint::black_box(message);
        runs.push(start.elapsed());
    }
    runs.sort();
    let median = runs[runs.len() / 2];
    println!("{} bytes of body, median {median:?}", body.len());
}
