//! `sse`: the SSE framer ([`SseParser`]).
//!
//! Mode byte: 0 keeps the default limits; otherwise `max_line_size` is `1 + 8 * (low 4 bits)`
//! and `max_event_size` is `1 + 8 * (high 4 bits)`, so that the limit paths run too.
//!
//! Invariants:
//! - the body fed whole and in the header's chunks gives the same events (type, data, id,
//!   retry, offsets), the same error, the same `finish` report and the same parser state;
//! - without an error, that is what a spec-literal reference parser reads from the body;
//! - a one-line event's `data` is the body's bytes at `data_offset`;
//! - after `finish` (even after an error) the parser reads a new stream like a fresh one,
//!   except for what the spec carries over (the last event ID).

use msgwire_core::sse::{SseLimits, SseParser};

use crate::Case;

/// The reference parser of rust/core/tests/common, included as source (the fuzz crate cannot
/// depend on test code).
#[path = "../../rust/core/tests/common/reference.rs"]
mod reference;
use reference::{Reference, reference};

/// The run of a parser, owned, as the framing tests take it (included as source too).
#[path = "../../rust/core/tests/common/outcome.rs"]
mod outcome;
use outcome::{Outcome, run_on};

/// The limits the mode byte selects.
pub fn limits(mode: u8) -> SseLimits {
    if mode == 0 {
        return SseLimits::default();
    }
    SseLimits { max_line_size: 1 + 8 * usize::from(mode & 0x0F), max_event_size: 1 + 8 * usize::from(mode >> 4) }
}

pub fn check(data: &[u8]) {
    let case = Case::new(data);
    let limits = limits(case.mode);
    let whole = run_on(&mut SseParser::new(limits), &[case.body]);
    let mut parser = SseParser::new(limits);
    let split = run_on(&mut parser, &case.chunks);
    assert_eq!(split, whole, "split as {:?}", case.chunks);

    if whole.error.is_none() {
        assert_eq!(as_reference(&whole), reference(case.body), "the reference parser disagrees");
    }
    for event in &whole.events {
        if !event.data.contains('\n') && crate::exact_text(&event.data) {
            let at = usize::try_from(event.data_offset).expect("offset fits usize");
            let raw = case.body.get(at..).expect("data_offset inside the body");
            assert!(raw.starts_with(event.data.as_bytes()), "data_offset {at} of {:?}", event.data);
        }
    }

    // A new stream on the same parser, after `finish` (which an error skipped: call it now).
    parser.finish();
    let again = run_on(&mut parser, &[case.body]);
    assert_eq!(again.error, whole.error, "the second stream");
    assert_eq!(again.pending, whole.pending, "the second stream");
    assert_eq!(again.without_ids(), whole.without_ids(), "the second stream");
    assert_eq!(again.comments, 2 * whole.comments, "comments count across streams");
}

/// What the real parser observed, in the reference's terms.
fn as_reference(outcome: &Outcome) -> Reference {
    let events = outcome.events.iter().map(|e| (e.event.clone(), e.data.clone(), e.id.clone(), e.retry)).collect();
    (events, outcome.last_event_id.clone(), outcome.reconnection_time, outcome.comments)
}
