//! The frame of a text chunk, learned: a stream sends every text delta in the same bytes (the
//! id, the model, the fingerprint, every key in one order) but for the text itself and, from
//! OpenAI, the `obfuscation` padding. Once the walk has read such a chunk, a chunk that repeats
//! its bytes around those two strings is read by comparing them (two `memcmp`s) and reading the
//! two strings, instead of walking every key again.
//!
//! Equal bytes mean an equal reading: the chunk the frame was learned from was walked (and, in
//! debug builds, checked against serde), nothing it read lies outside the text but the id and the
//! model, which the frame keeps as places in its bytes, and the padding is a value the walk skips.
//! Anything else (another delta, a finish, usage, whitespace moved) differs in its bytes and is
//! walked as before, and may teach the next frame.

use std::borrow::Cow;
use std::ops::Range;

use super::{Choice, Chunk, Delta, TextOrParts};
use crate::dialect::walk::Walk;

/// The key of OpenAI's padding, whose value changes in every chunk.
const PADDING: &str = "\"obfuscation\":";

#[derive(Debug, Default)]
pub(super) struct Frame {
    /// The chunk's bytes before its text (up to the text's opening quote); empty: none learned.
    head: String,
    /// From the text's closing quote on, to the padding's opening quote (included) when there
    /// is one, else to the end.
    middle: String,
    /// After the padding's closing quote (`None`: no padding).
    end: Option<String>,
    id: Option<Range<usize>>,
    model: Option<Range<usize>>,
}

impl Frame {
    /// `data` read with the frame, or `None` when it does not repeat the frame's bytes.
    pub(super) fn read<'a>(&self, data: &'a str) -> Option<Chunk<'a>> {
        if self.head.is_empty() || !data.starts_with(self.head.as_str()) {
            return None;
        }
        let mut walk = Walk::at(data, self.head.len());
        let text = walk.str()??;
        let rest = data.get(walk.position()..)?.strip_prefix(self.middle.as_str())?;
        if let Some(end) = &self.end {
            let mut padding = Walk::at(rest, 0);
            padding.plain_str()?;
            if rest.get(padding.position()..)? != end {
                return None;
            }
        } else if !rest.is_empty() {
            return None;
        }
        let span = |range: &Option<Range<usize>>| range.clone().and_then(|r| data.get(r)).map(Cow::Borrowed);
        let delta = Delta {
            content: Some(TextOrParts::Text(text)),
            refusal: None,
            reasoning_content: None,
            reasoning: None,
            reasoning_details: None,
            tool_calls: None,
            function_call: None,
        };
        Some(Chunk {
            id: span(&self.id),
            model: span(&self.model),
            choices: Some(vec![Choice { index: Some(0), delta: Some(delta), finish_reason: None }]),
            usage: None,
            x_groq: None,
            error: None,
        })
    }

    /// Learn the frame of `data`, which the walk read as `chunk`, when it is a text chunk
    /// (one choice, index 0, a text delta and nothing else) whose text it borrowed.
    pub(super) fn learn(&mut self, data: &str, chunk: &Chunk<'_>) {
        let Some(text) = text_of(chunk) else { return };
        let Some(start) = offset(data, text) else { return };
        let _ = self.learn_at(data, chunk, text, start);
    }

    fn learn_at(&mut self, data: &str, chunk: &Chunk<'_>, text: &str, start: usize) -> Option<()> {
        // the opening quote and the closing one: a borrowed text is the string's own bytes
        let (open, close) = (start.checked_sub(1)?, start + text.len());
        let bytes = data.as_bytes();
        if bytes.get(open) != Some(&b'"') || bytes.get(close) != Some(&b'"') {
            return None;
        }
        let in_head = |s: &Option<Cow<'_, str>>| match s {
            None => Some(None),
            Some(Cow::Borrowed(s)) => {
                offset(data, s).filter(|&at| at + s.len() <= open).map(|at| Some(at..at + s.len()))
            }
            Some(Cow::Owned(_)) => None,
        };
        let (id, model) = (in_head(&chunk.id)?, in_head(&chunk.model)?);
        let tail = data.get(close + 1..)?;
        // the padding's key is a key: in a valid chunk, `"obfuscation":` cannot lie inside a string
        let (middle, end) = match tail.rfind(PADDING) {
            Some(at) => {
                let quote = at + PADDING.len();
                let mut padding = Walk::at(tail, quote);
                padding.plain_str()?;
                (tail.get(..quote)?, Some(tail.get(padding.position()..)?.to_owned()))
            }
            None => (tail, None),
        };
        let head = data.get(..open)?;
        if self.head != head || self.middle != middle || self.end != end {
            *self = Self { head: head.to_owned(), middle: middle.to_owned(), end, id, model };
        }
        Some(())
    }
}

/// The text of a chunk that holds nothing else a stream reads (see [`Frame::learn`]).
fn text_of<'c>(chunk: &'c Chunk<'_>) -> Option<&'c str> {
    if chunk.usage.is_some() || chunk.x_groq.is_some() || chunk.error.is_some() {
        return None;
    }
    let [Choice { index: Some(0), delta: Some(delta), finish_reason: None }] = chunk.choices.as_deref()? else {
        return None;
    };
    let Delta {
        content: Some(TextOrParts::Text(Cow::Borrowed(text))),
        refusal: None,
        reasoning_content: None,
        reasoning: None,
        reasoning_details: None,
        tool_calls: None,
        function_call: None,
    } = delta
    else {
        return None;
    };
    Some(text)
}

/// Where `part` (borrowed from `whole`) starts in `whole`.
fn offset(whole: &str, part: &str) -> Option<usize> {
    let at = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (at + part.len() <= whole.len()).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::super::{Orders, walk_chunk};
    use super::*;

    fn chunk(text: &str, padding: &str) -> String {
        format!(
            r#"{{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{{"content":{text}}},"logprobs":null,"finish_reason":null}}],"obfuscation":{padding}}}"#
        )
    }

    /// The frame learned from one text chunk reads the next ones exactly as the walk does, and
    /// leaves every other chunk to the walk.
    #[test]
    fn a_learned_frame_reads_text_chunks_as_the_walk_does() {
        let mut frame = Frame::default();
        let first = chunk(r#""Hello""#, r#""abc""#);
        let walked = walk_chunk(&first, &mut Orders::default()).expect("walked");
        assert!(frame.read(&first).is_none(), "nothing learned yet");
        frame.learn(&first, &walked);
        let same = [
            chunk(r#"" world""#, r#""x""#),
            chunk(r#""""#, r#""a long padding string""#),
            chunk(r#""esc\"aped\n\u00e9""#, r#""p""#),
            chunk(r#""é😀""#, r#""""#),
        ];
        for data in &same {
            let read = frame.read(data).unwrap_or_else(|| panic!("framed: {data}"));
            let walked = walk_chunk(data, &mut Orders::default()).expect("walked");
            assert_eq!(format!("{read:?}"), format!("{walked:?}"), "{data}");
        }
        let other = [
            chunk("null", r#""x""#),                                           // no text
            chunk("7", r#""x""#),                                              // not a string
            chunk(r#""a""#, r#""x\"y""#),                                      // a padding with an escape: walked
            chunk(r#""a""#, "null"),                                           // not a string
            chunk(r#""a""#, r#""x""#).replace(r#""id":"c1""#, r#""id":"c2""#), // another id
            chunk(r#""a""#, r#""x""#).replace(r#""finish_reason":null"#, r#""finish_reason":"stop""#),
            chunk(r#""a""#, r#""x""#).replace("}],", "} ],"), // whitespace moved
            format!("{} ", chunk(r#""a""#, r#""x""#)),        // trailing bytes
            chunk(r#""a"#, ""),                               // cut
        ];
        for data in &other {
            assert!(frame.read(data).is_none(), "not the frame: {data}");
        }
    }

    #[test]
    fn the_id_and_model_must_come_before_the_text() {
        // Azure sorts keys: the id and the model follow the text, so no frame is kept
        let sorted = r#"{"choices":[{"delta":{"content":"a"},"finish_reason":null,"index":0}],"created":1,"id":"c","model":"m","object":"chat.completion.chunk"}"#;
        let walked = walk_chunk(sorted, &mut Orders::default()).expect("walked");
        let mut frame = Frame::default();
        frame.learn(sorted, &walked);
        assert!(frame.read(sorted).is_none());
        // without an id and a model, the frame needs none
        let bare = r#"{"choices":[{"delta":{"content":"a"},"index":0}]}"#;
        let walked = walk_chunk(bare, &mut Orders::default()).expect("walked");
        frame.learn(bare, &walked);
        let next = bare.replace("\"a\"", "\"b\"");
        let read = frame.read(&next).expect("framed");
        assert_eq!(format!("{read:?}"), format!("{:?}", walk_chunk(&next, &mut Orders::default()).expect("walked")));
    }
}
