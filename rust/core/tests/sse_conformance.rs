//! The SSE conformance vectors of `tests/fixtures/sse/vectors.json` (web-platform-tests
//! `eventsource/`, rexxars/eventsource-parser, florimondmanca/httpx-sse; its README says what
//! each checks), shared with `tests/sse/test_sse.py`. Every body is fed as the suite fed it, whole,
//! one byte at a time, cut in two at every point and cut at random (see `common::splittings`),
//! and must give the same events, offsets and end state each time; then its expectations are
//! checked. The tests below the first check what a vector cannot say (offsets, a reconnection
//! on the same parser).

mod common;

use common::run_on;
use common::vectors::{vector, vectors};
use msgwire_core::sse::SseParser;

#[test]
fn every_vector() {
    let all = vectors();
    assert!(all.len() >= 71, "vectors.json lost some: {}", all.len());
    for v in all {
        v.check();
    }
}

#[test]
fn wpt_format_bom_is_counted_in_offsets() {
    let out = vector("wpt-format-bom").check();
    assert_eq!(out.events[0].offset, 3, "the BOM is counted in offsets");
}

#[test]
fn wpt_format_data_before_final_empty_line_then_a_reconnection() {
    // The reconnection gets the same body: the second "test1" still has lastEventId "".
    let body = vector("wpt-format-data-before-final-empty-line").body();
    let mut parser = SseParser::default();
    let first = run_on(&mut parser, &[&body]);
    let second = run_on(&mut parser, &[&body]);
    assert_eq!(first, second);
    assert_eq!(second.ids(), [""]);
}

#[test]
fn eventsource_parser_an_id_without_data_applies_at_its_blank_line() {
    let mut parser = SseParser::default();
    run_on(&mut parser, &[b"id: 42\n"]);
    assert_eq!(parser.last_event_id(), "", "not before its blank line (and finish drops it)");
    let out = run_on(&mut parser, &[b"id: 42\n", b"\n"]);
    assert_eq!((out.events.len(), out.last_event_id.as_str()), (0, "42"));
    assert_eq!(run_on(&mut parser, &[b"id: bad\0id\n\n"]).last_event_id, "42");
    assert_eq!(run_on(&mut parser, &[b"id:\n\n"]).last_event_id, "");
}
