//! Test helpers shared by the framing tests: run a body through a parser under many splits, a
//! tiny deterministic PRNG, and a spec-literal reference SSE parser to compare against.
#![allow(dead_code)] // each test file uses a different part

use msgwire_core::sse::{SseLimits, SseParser};

mod outcome;
mod reference;
pub mod vectors;
#[allow(unused_imports)] // each test file uses a different part
pub use outcome::{Ev, Outcome, run_on};
#[allow(unused_imports)] // each test file uses a different part
pub use reference::{Reference, reference};

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
