//! One parser run, owned: its events, error, `finish` report and state. Shared by the framing
//! tests and the `sse` fuzz target (which includes this file as source: it cannot depend on
//! test code).
#![allow(dead_code)] // each user takes a different part

use msgwire_core::Error;
use msgwire_core::sse::{Pending, SseParser};

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

/// Everything observable after feeding a whole stream and finishing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub events: Vec<Ev>,
    /// The first error; the stream is abandoned there (not finished).
    pub error: Option<Error>,
    /// What `finish` reported (`None` after an error).
    pub pending: Option<Pending>,
    pub last_event_id: String,
    pub reconnection_time: Option<u64>,
    pub comments: u64,
}

impl Outcome {
    /// The `(type, data)` pairs of the events.
    pub fn pairs(&self) -> Vec<(&str, &str)> {
        self.events.iter().map(|e| (e.event.as_str(), e.data.as_str())).collect()
    }

    /// The data of the events.
    pub fn data(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.data.as_str()).collect()
    }

    /// The ids of the events.
    pub fn ids(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.id.as_str()).collect()
    }

    /// The events without their `id`, which carries over from an earlier stream.
    pub fn without_ids(&self) -> Vec<Ev> {
        self.events.iter().map(|e| Ev { id: String::new(), ..e.clone() }).collect()
    }
}

/// Feed `chunks` to `parser` in order, then finish the stream (unless an error stopped it).
pub fn run_on(parser: &mut SseParser, chunks: &[&[u8]]) -> Outcome {
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
    let pending = if error.is_none() { Some(parser.finish()) } else { None };
    Outcome {
        events,
        error,
        pending,
        last_event_id: parser.last_event_id().to_owned(),
        reconnection_time: parser.reconnection_time(),
        comments: parser.comments_seen(),
    }
}
