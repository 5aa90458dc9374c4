//! The conversation array of a request body, written one turn at a time.
//!
//! Each dialect writes the turns of its conversation array (`messages`, `contents`, `input`)
//! into [`Turns`], serialized as they close, and notes where each plan item began a turn. That
//! is what lets a request be re-built from a prefix ([`super::cache`]): the bytes of the turns
//! before an item that began one depend only on the items before it, so a build that shares
//! those items can keep them and write the rest. The body around the array (system prompt,
//! tools, settings) is written first with the array empty ([`array_at`] finds where its
//! elements go): the turns are written after its head, then its tail, into one buffer.

use serde::Serialize;

use super::{Error, Loss, to_vec};

/// Where an item began a turn: the array's length before it (no comma) and the report's length
/// when the item was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Start {
    pub offset: usize,
    pub report: usize,
}

/// The body being written: what comes before the conversation array's elements (the head: the
/// settings and fields before it, and its `[`), then the turns written so far (comma-separated),
/// and where items began one. [`Turns::finish`] adds the rest of the body.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    pub array: Vec<u8>,
    /// The head's length: where the first turn goes.
    pub base: usize,
    /// Per plan item: where it began a turn, when it did and a turn was written before it (an
    /// item that opens the array is no place to resume: the opening rules look at it).
    pub starts: Vec<Option<Start>>,
    /// Turns written by this build (not kept from a previous one).
    pub written: usize,
}

impl Turns {
    /// No turn yet: the body's `head`, with room for `size` bytes more.
    pub fn new(head: &[u8], size: usize, items: usize) -> Self {
        let mut array = Vec::with_capacity(head.len() + size);
        array.extend_from_slice(head);
        Self { array, base: head.len(), starts: vec![None; items], written: 0 }
    }

    /// Turns resumed after `array` (the head and the turns of the items before `from`).
    pub fn resume(array: Vec<u8>, base: usize, mut starts: Vec<Option<Start>>, items: usize) -> Self {
        starts.resize(items, None);
        Self { array, base, starts, written: 0 }
    }

    fn has_turns(&self) -> bool {
        self.array.len() > self.base
    }

    /// Item `item` begins a new turn (`report` is the report's length when it was reached).
    pub fn begin(&mut self, item: usize, report: usize) {
        if self.has_turns() {
            self.starts[item] = Some(Start { offset: self.array.len(), report });
        }
    }

    /// Write a closed turn.
    pub fn push<T: Serialize>(&mut self, turn: &T) -> Result<(), Error> {
        if self.has_turns() {
            self.array.push(b',');
        }
        crate::json_out::to_writer(&mut self.array, turn).map_err(|e| Error::write(&e))?;
        self.written += 1;
        Ok(())
    }

    /// Put `turn` first (a turn the opening rules add once every item is written).
    pub fn prepend<T: Serialize>(&mut self, turn: &T) -> Result<(), Error> {
        let mut first = to_vec(turn)?;
        if self.has_turns() {
            first.push(b',');
        }
        let shift = first.len();
        self.array.splice(self.base..self.base, first);
        for start in self.starts.iter_mut().flatten() {
            start.offset += shift;
        }
        self.written += 1;
        Ok(())
    }

    /// The body: the turns, then `tail` (the rest of the body after the array's elements).
    pub fn finish(&mut self, tail: &[u8]) {
        self.array.extend_from_slice(tail);
    }
}

/// Where the elements of the conversation array `field` go in `body` (a request body written
/// with that array empty): after the `[` of its first `"<field>":[]`. What comes before it is
/// object keys and JSON strings, in which a quote is always escaped.
pub(crate) fn array_at(body: &[u8], field: &str) -> usize {
    let needle = format!("\"{field}\":[]");
    let at = memchr::memmem::find(body, needle.as_bytes());
    debug_assert!(at.is_some(), "no empty {field} array in the body");
    at.map_or(body.len(), |at| at + needle.len() - 1)
}

/// The report of a build: the plan's steps, the writer's, then the body's (tools, settings),
/// in input order (see [`super::to_request_json`]).
pub(crate) fn ordered(plan: &[Loss], writer: &[Loss], body: &[Loss]) -> Vec<Loss> {
    let mut report = Vec::with_capacity(plan.len() + writer.len() + body.len());
    report.extend_from_slice(plan);
    report.extend_from_slice(writer);
    report.extend_from_slice(body);
    report.sort_by_key(|l| (l.message, l.block.is_none(), l.block));
    report
}
