//! Test helpers shared by the framing tests: run a body through a parser under many splits, a
//! tiny deterministic PRNG, and a spec-literal reference SSE parser to compare against.
#![allow(dead_code)] // each test file uses a different part

use msgwire_core::Error;
use msgwire_core::sse::{Pending, SseLimits, SseParser};

mod reference;
pub mod vectors;
#[allow(unused_imports)] // each test file uses a different part
pub use reference::{Reference, reference};

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

/// Feed `chunks` to a fresh parser with `limits`.
pub fn run(limits: SseLimits, chunks: &[&[u8]]) -> Outcome {
    run_on(&mut SseParser::new(limits), chunks)
}

/// xorshift64: a deterministic PRNG for test splits, no crate needed.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        let n = u64::try_from(n).expect("usize fits u64");
        usize::try_from(self.next_u64() % n).expect("below n")
    }
}

/// `body` cut into chunks of random sizes in `1..=max`.
pub fn random_chunks<'a>(body: &'a [u8], rng: &mut XorShift, max: usize) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let size = (1 + rng.below(max)).min(rest.len());
        let (chunk, tail) = rest.split_at(size);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// The ways to cut `body` that every test checks: whole, one byte at a time, in two at every
/// point (empty chunks included), and 24 random multi-splits.
pub fn splittings(body: &[u8]) -> Vec<Vec<&[u8]>> {
    let mut all = vec![vec![body], body.chunks(1).collect()];
    all.extend((0..=body.len()).map(|i| {
        let (head, tail) = body.split_at(i);
        vec![head, tail]
    }));
    let mut rng = XorShift::new(0x5EED_0000 ^ body.len() as u64);
    for max in [2, 3, 5, 8, 13, 64] {
        for _ in 0..4 {
            all.push(random_chunks(body, &mut rng, max));
        }
    }
    all
}

/// Run `body` under every splitting of [`splittings`] (and `extra` chunkings, such as the ones a
/// test suite used), check that all give the same outcome as the whole body, and return it.
pub fn same_for_every_split(limits: SseLimits, body: &[u8], extra: &[&[&[u8]]]) -> Outcome {
    let whole = run(limits, &[body]);
    let mut chunkings = splittings(body);
    chunkings.extend(extra.iter().map(|chunks| chunks.to_vec()));
    for chunks in &chunkings {
        let got = run(limits, chunks);
        assert_eq!(got, whole, "differs when split as {chunks:?}");
    }
    whole
}

/// [`same_for_every_split`] with default limits and no extra chunking.
pub fn conformant(body: &[u8]) -> Outcome {
    same_for_every_split(SseLimits::default(), body, &[])
}

/// The chunks of a test suite, checked as given, whole and under every splitting.
pub fn conformant_chunks(chunks: &[&[u8]]) -> Outcome {
    let body = chunks.concat();
    same_for_every_split(SseLimits::default(), &body, &[chunks])
}

/// What the real parser observed, in the reference's terms.
pub fn as_reference(outcome: &Outcome) -> Reference {
    let events = outcome.events.iter().map(|e| (e.event.clone(), e.data.clone(), e.id.clone(), e.retry)).collect();
    (events, outcome.last_event_id.clone(), outcome.reconnection_time, outcome.comments)
}
