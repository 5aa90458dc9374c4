//! Build a request from a canonical session many times, for profiling the request writers
//! alone: `cargo run --release --example request -- <dialect> <session.json> [times]`.

#![allow(clippy::print_stdout)] // its one line of output

use std::time::Instant;

use msgwire_core::DialectName;
use msgwire_core::request::{Options, to_request_body};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dialect = DialectName::ALL.into_iter().find(|d| d.as_str() == args[1]).expect("a dialect name");
    let session = std::fs::read(&args[2]).expect("a readable file");
    let times: usize = args.get(3).map_or(200, |t| t.parse().expect("a count"));
    let options = Options::default();
    let mut runs = Vec::with_capacity(times);
    for _ in 0..times {
        let start = Instant::now();
        let body = to_request_body(&session, dialect, &options, false).expect("a request");
        std::hint::black_box(body);
        runs.push(start.elapsed());
    }
    runs.sort();
    let median = runs[runs.len() / 2];
    println!("{} bytes of session, median {median:?}", session.len());
}
