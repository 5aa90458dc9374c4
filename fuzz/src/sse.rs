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

use msgwire_core::Error;
use msgwire_core::sse::{Pending, SseLimits, SseParser};

use crate::Case;

/// The reference parser of rust/core/tests/common, included as source (the fuzz crate cannot
/// depend on test code).
#[path = "../../rust/core/tests/common/reference.rs"]
mod reference;
use reference::{Reference, reference};

/// One dispatched event, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ev {
    pub event: String,
    pub data: String,
    pub id: String,
    pub retry: Option<u64>,
    pub offset: u64,
    pub data_offset: u64,
}

/// Everything observable after feeding a stream and finishing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub events: Vec<Ev>,
    /// The first error: feeding stops there and `finish` is not called.
    pub error: Option<Error>,
    pub pending: Option<Pending>,
    pub last_event_id: String,
    pub reconnection_time: Option<u64>,
    pub comments: u64,
}

impl Outcome {
    /// The events without their `id`, which carries over from an earlier stream.
    fn without_ids(&self) -> Vec<Ev> {
        self.events.iter().map(|e| Ev { id: String::new(), ..e.clone() }).collect()
    }
}

/// The limits the mode byte selects.
pub fn limits(mode: u8) -> SseLimits {
    if mode == 0 {
        return SseLimits::default();
    }
    SseLimits { max_line_size: 1 + 8 * usize::from(mode & 0x0F), max_event_size: 1 + 8 * usize::from(mode >> 4) }
}

/// Feed `chunks` in order, then finish (unless an error stopped the stream).
pub fn run(parser: &mut SseParser, chunks: &[&[u8]]) -> Outcome {
    let mut events = Vec::new();
    let mut error = None;
    for chunk in chunks {
        let fed = parser.feed(chunk, |e| {
            events.push(Ev {
                event: e.event.to_owned(),
                data: e.data.to_owned(),
                id: e.id.to_owned(),
                retry: e.retry,
                offset: e.offset,
                data_offset: e.data_offset,
            });
            Ok::<_, Error>(())
        });
        if let Err(err) = fed {
            error = Some(err);
            break;
        }
    }
    let pending = error.is_none().then(|| parser.finish());
    Outcome {
        events,
        error,
        pending,
        last_event_id: parser.last_event_id().to_owned(),
        reconnection_time: parser.reconnection_time(),
        comments: parser.comments_seen(),
    }
}

pub fn check(data: &[u8]) {
    let case = Case::new(data);
    let limits = limits(case.mode);
    let whole = run(&mut SseParser::new(limits), &[case.body]);
    let mut parser = SseParser::new(limits);
    let split = run(&mut parser, &case.chunks);
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
    let again = run(&mut parser, &[case.body]);
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
