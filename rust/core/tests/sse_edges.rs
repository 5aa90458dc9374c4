//! SSE framing beyond the published vectors: byte splits inside BOMs, CRLFs and characters,
//! invalid UTF-8, limits, offsets, the end of the stream, and random streams checked against a
//! spec-literal reference parser.

mod common;

use common::vectors::{random_pieces, vectors};
use common::{XorShift, as_reference, conformant, random_chunks, reference, run, run_on, same_for_every_split};
use msgwire_core::sse::{Pending, SseLimits, SseParser};
use msgwire_core::{Error, ErrorKind};

const CLEAN: Option<Pending> = Some(Pending { partial_line: false, undispatched: None });

#[test]
fn a_crlf_split_across_chunks_is_one_terminator() {
    for chunks in
        [&[&b"data: a\r"[..], b"\n\n"][..], &[b"data: a\r", b"\n", b"\n"], &[b"data: a\r", b"", b"\n\r", b"\n"]]
    {
        let out = run(SseLimits::default(), chunks);
        assert_eq!(out.data(), ["a"], "{chunks:?}");
        assert_eq!(out.pending, CLEAN);
    }
    // Without the skip-one-LF flag this would dispatch "a" alone at the phantom blank line.
    assert_eq!(run(SseLimits::default(), &[b"data: a\r", b"\ndata: b\n\n"]).data(), ["a\nb"]);
    // A CR that ends the stream ends its line; nothing is pending.
    assert_eq!(conformant(b"data: a\r\r").data(), ["a"]);
    assert_eq!(conformant(b"data: a\r").pending, Some(Pending { partial_line: false, undispatched: Some(0) }));
}

#[test]
fn the_bom_is_dropped_only_at_the_start_even_split() {
    let out = conformant(b"\xEF\xBB\xBFdata: x\n\n");
    assert_eq!((out.data(), out.events[0].offset, out.events[0].data_offset), (vec!["x"], 3, 9));
    // Mid-stream it spoils the field name: the line is an unknown field.
    assert_eq!(conformant(b"data: 1\n\n\xEF\xBB\xBFdata: 2\n\ndata: 3\n\n").data(), ["1", "3"]);
    // A BOM prefix that goes wrong is content, decoded like any invalid UTF-8.
    let out = conformant(b"\xEF\xBBdata: x\n\n:\n");
    assert!(out.events.is_empty());
    assert_eq!(out.comments, 1);
    let out = conformant(b"\xEF\xBB");
    assert_eq!(out.pending, Some(Pending { partial_line: true, undispatched: None }));
    assert_eq!(conformant(b"\xEF\xBB\xBF").pending, CLEAN);
    assert_eq!(conformant(b"").pending, CLEAN);
}

#[test]
fn utf8_split_across_chunks_comes_out_whole() {
    let body = "event: \u{e9}t\u{e9}\ndata: \u{1F604} \u{6211} \u{20AC}\nid: \u{1F604}\n\n".as_bytes();
    let out = conformant(body);
    assert_eq!(out.pairs(), [("\u{e9}t\u{e9}", "\u{1F604} \u{6211} \u{20AC}")]);
    assert_eq!(out.ids(), ["\u{1F604}"]);
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let out = conformant(b"data: a\xFFb\ndata: \xE2\x80\ndata: \xF0\x9F\x98\nevent: \xC3(\nid: \xED\xA0\x80\n\n");
    assert_eq!(out.pairs(), [("\u{FFFD}(", "a\u{FFFD}b\n\u{FFFD}\n\u{FFFD}")]);
    assert_eq!(out.ids(), ["\u{FFFD}\u{FFFD}\u{FFFD}"], "a surrogate is three bad bytes");
    // An invalid byte in a field name makes an unknown field, as the decoded name would.
    assert!(conformant(b"dat\xE1: x\n\n").events.is_empty());
}

#[test]
fn nul_is_data_but_voids_an_id() {
    let out = conformant(b"id: 7\ndata: a\0b\0\n\nid: 8\0\ndata: \0\n\n");
    assert_eq!(out.data(), ["a\0b\0", "\0"]);
    assert_eq!(out.ids(), ["7", "7"]);
    assert!(conformant(b"data\0: x\n\n").events.is_empty(), "data\\0 is an unknown field");
}

#[test]
fn offsets_point_at_the_block_and_its_data() {
    let body = b"\xEF\xBB\xBF: hi\r\n\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\n\n\ndata:x\rid: 9\r\r";
    let out = conformant(body);
    let at = |needle: &[u8]| body.windows(needle.len()).position(|w| w == needle).expect("in body") as u64;
    assert_eq!(out.events[0].offset, at(b"event: a"));
    assert_eq!(out.events[0].data_offset, at(b"1\r\n"));
    assert_eq!(out.events[1].offset, at(b"data:x"));
    assert_eq!(out.events[1].data_offset, at(b"x\r"));
    assert_eq!(out.events[1].id, "9");
}

#[test]
fn retry_is_reported_on_its_block_and_kept() {
    let out = conformant(
        b"retry: 10\ndata: a\nretry: 20\n\ndata: b\n\nretry: x\ndata: c\n\nretry: 99999999999999999999999\n\n",
    );
    assert_eq!(out.events.iter().map(|e| e.retry).collect::<Vec<_>>(), [Some(20), None, None]);
    assert_eq!(out.reconnection_time, Some(u64::MAX), "huge values saturate");
}

#[test]
fn finish_reports_what_the_stream_lost() {
    let ends: Vec<_> = vectors().into_iter().filter(|v| v.name.starts_with("end-of-stream-")).collect();
    assert_eq!(ends.len(), 7);
    for v in ends {
        let pending = v.pending().expect("an end-of-stream vector states its end");
        let out = v.check();
        assert!(out.pending.is_some_and(|p| p.is_clean() == (pending == Pending::default())), "{}", v.name);
    }
    // The spec discards the partial line: a cut `retry` is not applied, a cut comment not counted.
    let out = conformant(b"retry: 5\n\n: a\nretry: 7");
    assert_eq!((out.reconnection_time, out.comments), (Some(5), 1));
}

#[test]
fn finish_readies_the_parser_for_a_reconnection() {
    let mut parser = SseParser::default();
    let first = run_on(&mut parser, &[b"\xEF\xBB\xBFid: 1\nretry: 9\n: c\ndata: a\n\nid: 2\ndata: lost\n"]);
    assert_eq!(first.events[0].id, "1");
    assert_eq!(parser.offset(), 0);
    let second = run_on(&mut parser, &[b"\xEF\xBB\xBFdata: b\n\n"]);
    assert_eq!(second.events[0].offset, 3, "offsets restart and a new BOM is dropped");
    assert_eq!(second.ids(), ["1"], "the undispatched id 2 is gone, id 1 carries over");
    assert_eq!((second.reconnection_time, second.comments), (Some(9), 1));
}

#[test]
fn a_line_over_the_limit_is_an_error_at_the_same_offset_whatever_the_split() {
    let limits = SseLimits { max_line_size: 10, max_event_size: 100 };
    // Exactly 10 bytes per line is fine, with any terminator.
    let out = same_for_every_split(limits, b"data:12345\r\ndata:67890\r:234567890\n\n", &[]);
    assert_eq!(out.data(), ["12345\n67890"]);
    // The 11th byte of a line is refused, after what came before was dispatched.
    let body = b"data:1\n\n: ok\ndata:123456\n\n";
    let out = same_for_every_split(limits, body, &[]);
    assert_eq!(out.data(), ["1"]);
    let err = out.error.expect("too long");
    assert_eq!(err.kind, ErrorKind::Limit { name: "max_line_size", limit: 10 });
    assert_eq!(err.offset, Some(13 + 10));
    assert!(err.to_string().contains("(byte 23)"), "{err}");
    // An endless line is refused before it is buffered past the limit.
    let err = run(limits, &[b"data: ", b"xxxxxxxx", b"xxxxxxxx"]).error.expect("too long");
    assert_eq!(err.offset, Some(10));
    // Zero allows only blank lines.
    let zero = SseLimits { max_line_size: 0, max_event_size: 0 };
    assert_eq!(same_for_every_split(zero, b"\n\r\n\r", &[]).error, None);
    assert_eq!(same_for_every_split(zero, b"\n\nd", &[]).error.and_then(|e| e.offset), Some(2));
}

#[test]
fn event_data_over_the_limit_is_an_error_at_its_data_line() {
    let limits = SseLimits { max_line_size: 100, max_event_size: 5 };
    // "ab\ncd" is 5 bytes: fine. One more byte in either place is not.
    assert_eq!(same_for_every_split(limits, b"data: ab\ndata: cd\n\ndata: 12345\n\n", &[]).data(), ["ab\ncd", "12345"]);
    for (body, offset) in [
        (&b"data: ab\ndata: cde\n\n"[..], 9 + 6),
        (b"data: 123456\n\n", 6),
        (b"data\ndata\ndata\ndata\ndata\ndata\ndata\n\n", 30 + 4),
    ] {
        let out = same_for_every_split(limits, body, &[]);
        let err = out.error.expect("too large");
        assert_eq!(err.kind, ErrorKind::Limit { name: "max_event_size", limit: 5 });
        assert_eq!(err.offset, Some(offset), "{:?}", String::from_utf8_lossy(body));
    }
    // The limit is on decoded data: an invalid byte grows to three.
    let out = same_for_every_split(limits, b"data: \xFF\xFF\n\n", &[]);
    assert_eq!(out.error.map(|e| e.kind), Some(ErrorKind::Limit { name: "max_event_size", limit: 5 }));
}

#[test]
fn callback_errors_stop_the_feed() {
    let mut parser = SseParser::default();
    let mut seen = Vec::new();
    let result = parser.feed(b"data: 1\n\ndata: 2\n\ndata: 3\n\n", |e| {
        seen.push(e.data.to_owned());
        if e.data == "2" { Err(Error::json("bad payload", None)) } else { Ok(()) }
    });
    assert_eq!(result.map_err(|e| e.to_string()), Err("JSON is malformed: bad payload".to_owned()));
    assert_eq!(seen, ["1", "2"]);
    // finish() recovers the parser.
    parser.finish();
    assert_eq!(run_on(&mut parser, &[b"data: 4\n\n"]).data(), ["4"]);
}

/// Random streams over an alphabet of SSE-significant pieces (`random_pieces` of
/// `tests/fixtures/sse/vectors.json`, shared with `tests/sse/test_sse.py`) must parse as the spec-literal
/// reference says, whatever the chunking.
#[test]
fn random_streams_match_the_reference_parser() {
    let pieces = random_pieces();
    let mut rng = XorShift::new(0xC0FF_EE00);
    for case in 0..3000 {
        let body: Vec<u8> = (0..rng.below(40)).flat_map(|_| pieces[rng.below(pieces.len())].iter().copied()).collect();
        let whole = run(SseLimits::default(), &[&body]);
        assert_eq!(as_reference(&whole), reference(&body), "case {case}: {:?}", String::from_utf8_lossy(&body));
        for max in [1, 3, 7] {
            let chunks = random_chunks(&body, &mut rng, max);
            assert_eq!(run(SseLimits::default(), &chunks), whole, "case {case} split {chunks:?}");
        }
    }
}
