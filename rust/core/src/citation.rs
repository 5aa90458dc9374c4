//! Citations: each provider's form, read into [`Citation`] and written back.
//!
//! - Anthropic: `citations` of a text block (`citations_delta` in a stream), each for the whole
//!   block: `char_location`, `page_location`, `content_block_location`, `search_result_location`,
//!   `web_search_result_location`. Written back only as they came (`raw`): their encrypted
//!   index or document position has no typed field, and no other provider's citation has one.
//! - Responses: `annotations` of an `output_text` part, each for a span of it: `url_citation`,
//!   `file_citation`, `container_file_citation`, `file_path`. A citation of another provider
//!   that has a URL is written as a `url_citation` (its span, else the whole part).
//! - Gemini: the candidate's `groundingMetadata`, one citation per source of each grounding
//!   support (`kind` `grounding`); its spans are bytes of the response's text, made characters
//!   of the text block here. The metadata itself is kept whole on a server tool call block
//!   (`grounding_metadata`) and written back from there.
//!
//! Spans (`start_index`, `end_index`) count characters (Unicode scalar values) of the block's
//! text, as Python indexes a `str`; none means the whole block.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::canonical::{Citation, Raw};

/// Anthropic's citation types.
const ANTHROPIC: [&str; 5] = [
    "char_location",
    "page_location",
    "content_block_location",
    "search_result_location",
    "web_search_result_location",
];

/// Responses' annotation types.
const RESPONSES: [&str; 4] = ["url_citation", "file_citation", "container_file_citation", "file_path"];

/// The kind of the citations read from Gemini's grounding metadata.
pub(crate) const GROUNDING: &str = "grounding";

fn raw_of(json: &str) -> Option<Raw> {
    RawValue::from_string(json.to_owned()).ok().map(Raw)
}

/// An Anthropic citation object; `None` when it is not an object with a `type`.
pub(crate) fn from_anthropic(json: &str) -> Option<Citation> {
    #[derive(Deserialize)]
    struct In {
        #[serde(rename = "type")]
        kind: String,
        url: Option<String>,
        title: Option<String>,
        document_title: Option<String>,
        cited_text: Option<String>,
    }
    let c: In = serde_json::from_str(json).ok()?;
    Some(Citation {
        kind: c.kind,
        url: c.url,
        title: c.title.or(c.document_title),
        cited_text: c.cited_text,
        start_index: None,
        end_index: None,
        raw: raw_of(json),
    })
}

/// A Responses annotation; `text` is the part's text (for the cited text). The raw object is
/// kept when the typed fields do not say all of it.
pub(crate) fn from_responses(json: &str, text: &str) -> Option<Citation> {
    #[derive(Deserialize)]
    struct In {
        #[serde(rename = "type")]
        kind: String,
        url: Option<String>,
        title: Option<String>,
        filename: Option<String>,
        start_index: Option<u64>,
        end_index: Option<u64>,
    }
    let a: In = serde_json::from_str(json).ok()?;
    let cited_text = match (a.start_index, a.end_index) {
        (Some(start), Some(end)) => char_slice(text, start, end),
        _ => None,
    };
    let mut citation = Citation {
        kind: a.kind,
        url: a.url,
        title: a.title.or(a.filename),
        cited_text,
        start_index: a.start_index,
        end_index: a.end_index,
        raw: None,
    };
    let typed = (citation.kind == "url_citation")
        .then(|| serde_json::to_string(&UrlCitation::of(&citation, text)).ok())
        .flatten();
    if typed.as_deref() != Some(json) {
        citation.raw = raw_of(json);
    }
    Some(citation)
}

/// `text[start..end]` in characters, when both are within it.
fn char_slice(text: &str, start: u64, end: u64) -> Option<String> {
    let (start, end) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    if start > end {
        return None;
    }
    Some(text.chars().skip(start).take(end - start).collect())
}

/// Whether an Anthropic body can carry this citation (its own, as it came).
pub(crate) fn anthropic_writes(c: &Citation) -> bool {
    ANTHROPIC.contains(&c.kind.as_str()) && c.raw.is_some()
}

/// Whether a Responses body can carry this citation: its own, or any with a URL.
pub(crate) fn responses_writes(c: &Citation) -> bool {
    (RESPONSES.contains(&c.kind.as_str()) && c.raw.is_some()) || c.url.is_some()
}

/// Whether a Gemini body carries this citation: its own grounding (written from the metadata
/// kept on the grounding block).
pub(crate) fn gemini_writes(c: &Citation) -> bool {
    c.kind == GROUNDING
}

/// A Responses `url_citation`, its keys in the order OpenAI writes them.
#[derive(Serialize)]
pub(crate) struct UrlCitation<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    end_index: u64,
    start_index: u64,
    title: &'a str,
    url: &'a str,
}

impl<'a> UrlCitation<'a> {
    /// The citation as a `url_citation` of `text` (the whole text when it has no span).
    pub(crate) fn of(c: &'a Citation, text: &str) -> Self {
        let (start, end) = match (c.start_index, c.end_index) {
            (Some(start), Some(end)) => (start, end),
            _ => (0, text.chars().count() as u64),
        };
        let url = c.url.as_deref().unwrap_or("");
        Self { kind: "url_citation", end_index: end, start_index: start, title: c.title.as_deref().unwrap_or(url), url }
    }
}

/// A Responses annotation: its own object, or a `url_citation` made of another provider's.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Annotation<'a> {
    Raw(&'a RawValue),
    Url(UrlCitation<'a>),
}

/// The annotations of a text for a Responses body (the citations it can carry, see
/// [`responses_writes`]).
pub(crate) fn responses_annotations<'a>(citations: &'a [Citation], text: &str) -> Vec<Annotation<'a>> {
    citations
        .iter()
        .filter(|c| responses_writes(c))
        .map(|c| match &c.raw {
            Some(raw) if RESPONSES.contains(&c.kind.as_str()) => Annotation::Raw(&raw.0),
            _ => Annotation::Url(UrlCitation::of(c, text)),
        })
        .collect()
}

/// The citations of a text for an Anthropic body (its own, see [`anthropic_writes`]).
pub(crate) fn anthropic_citations(citations: &[Citation]) -> Vec<&RawValue> {
    citations.iter().filter(|c| anthropic_writes(c)).filter_map(|c| c.raw.as_ref().map(|r| &*r.0)).collect()
}

// --- Gemini ------------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Grounding {
    #[serde(default)]
    grounding_chunks: Vec<Chunk>,
    #[serde(default)]
    grounding_supports: Vec<Support>,
}

#[derive(Deserialize)]
struct Chunk {
    web: Option<Source>,
    #[serde(rename = "retrievedContext")]
    retrieved_context: Option<Source>,
    maps: Option<Source>,
}

#[derive(Deserialize)]
struct Source {
    uri: Option<String>,
    title: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Support {
    segment: Option<Segment>,
    #[serde(default)]
    grounding_chunk_indices: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Segment {
    start_index: Option<usize>,
    end_index: Option<usize>,
    text: Option<String>,
}

/// The citations of Gemini's grounding metadata, for text blocks whose texts are `texts` (in
/// order; the support spans are bytes of their concatenation): `(index in texts, citation)`.
pub(crate) fn from_gemini(metadata: &str, texts: &[&str]) -> Vec<(usize, Citation)> {
    let Ok(grounding) = serde_json::from_str::<Grounding>(metadata) else { return Vec::new() };
    let mut out = Vec::new();
    for support in grounding.grounding_supports {
        let segment = support.segment.unwrap_or(Segment { start_index: None, end_index: None, text: None });
        let start = segment.start_index.unwrap_or(0);
        let end = segment.end_index.unwrap_or(start);
        // the block the span starts in, and the span in its characters
        let mut offset = 0;
        let mut place = None;
        for (i, text) in texts.iter().enumerate() {
            if start < offset + text.len() || i + 1 == texts.len() {
                let local = |at: usize| {
                    let at = at.saturating_sub(offset).min(text.len());
                    let at = (0..=at).rev().find(|&b| text.is_char_boundary(b)).unwrap_or(0);
                    text[..at].chars().count() as u64
                };
                place = Some((i, local(start), local(end)));
                break;
            }
            offset += text.len();
        }
        let Some((block, start_index, end_index)) = place else { continue };
        for chunk in support.grounding_chunk_indices {
            let source = grounding.grounding_chunks.get(chunk);
            let source = source.and_then(|c| c.web.as_ref().or(c.retrieved_context.as_ref()).or(c.maps.as_ref()));
            out.push((
                block,
                Citation {
                    kind: GROUNDING.to_owned(),
                    url: source.and_then(|s| s.uri.clone()),
                    title: source.and_then(|s| s.title.clone()),
                    cited_text: segment.text.clone(),
                    start_index: Some(start_index),
                    end_index: Some(end_index),
                    raw: None,
                },
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_url_citations_keep_no_raw_when_the_typed_fields_say_it_all() {
        let text = "see [a](https://a.example)";
        let json = r#"{"type":"url_citation","end_index":26,"start_index":4,"title":"A","url":"https://a.example"}"#;
        let c = from_responses(json, text).expect("reads");
        assert_eq!((c.raw, c.cited_text.as_deref()), (None, Some("[a](https://a.example)")));
        let spaced = r#"{"type": "url_citation","end_index":26,"start_index":4,"title":"A","url":"https://a.example"}"#;
        assert!(from_responses(spaced, text).expect("reads").raw.is_some());
        let file = r#"{"type":"file_citation","file_id":"f","filename":"a.pdf","index":3}"#;
        let c = from_responses(file, text).expect("reads");
        assert_eq!((c.title.as_deref(), c.raw.is_some()), (Some("a.pdf"), true));
    }

    #[test]
    fn anthropic_citations_map_to_url_citations_over_the_whole_part() {
        let json = r#"{"type":"web_search_result_location","cited_text":"c","url":"https://u","title":"T","encrypted_index":"E"}"#;
        let c = from_anthropic(json).expect("reads");
        assert!(anthropic_writes(&c) && responses_writes(&c));
        let written = serde_json::to_string(&UrlCitation::of(&c, "héllo")).expect("writes");
        assert_eq!(written, r#"{"type":"url_citation","end_index":5,"start_index":0,"title":"T","url":"https://u"}"#);
        let document = from_anthropic(r#"{"type":"char_location","document_index":0,"document_title":"D"}"#);
        let document = document.expect("reads");
        assert_eq!(document.title.as_deref(), Some("D"));
        assert!(!responses_writes(&document), "no URL: nothing to write for Responses");
    }

    #[test]
    fn gemini_spans_are_bytes_of_the_whole_text() {
        let metadata = r#"{"groundingChunks":[{"web":{"uri":"https://a","title":"a"}},{"web":{"uri":"https://b"}}],
            "groundingSupports":[{"segment":{"startIndex":10,"endIndex":12,"text":"ab"},"groundingChunkIndices":[0,1]}]}"#;
        let cited = from_gemini(metadata, &["héllo", " é ab"]);
        let spans: Vec<_> = cited.iter().map(|(b, c)| (*b, c.start_index, c.end_index, c.url.as_deref())).collect();
        assert_eq!(spans, [(1, Some(3), Some(5), Some("https://a")), (1, Some(3), Some(5), Some("https://b"))]);
    }
}
