//! The SSE conformance vectors of WIRE.md §1.5: web-platform-tests `eventsource/`,
//! rexxars/eventsource-parser and florimondmanca/httpx-sse. Every body is fed whole, one byte
//! at a time, cut in two at every point and cut at random (see `common::splittings`), and must
//! give the same events, offsets and end state each time; the tests then check that outcome.

mod common;

use common::{conformant, conformant_chunks, run_on};
use msgwire_core::sse::{Pending, SseParser};

/// A WPT body from `resources/message.py`: the message, `\n\n`, then always one more `\n`.
fn message_py(message: &[u8]) -> Vec<u8> {
    [message, b"\n\n\n"].concat()
}

/// A WPT body from `resources/message.py?newline=none`: the message, then the trailing `\n`.
fn message_py_no_newline(message: &[u8]) -> Vec<u8> {
    [message, b"\n"].concat()
}

const CLEAN: Option<Pending> = Some(Pending { partial_line: false, undispatched: None });

// ---- web-platform-tests eventsource/ ----

#[test]
fn wpt_format_bom() {
    let out = conformant(&message_py(b"\xEF\xBB\xBFdata:1\n\n\xEF\xBB\xBFdata:2\n\ndata:3"));
    assert_eq!(out.data(), ["1", "3"]);
    assert_eq!(out.events[0].offset, 3, "the BOM is counted in offsets");
    assert_eq!(out.pending, CLEAN);
}

#[test]
fn wpt_format_bom_2() {
    let out = conformant(&message_py(b"\xEF\xBB\xBF\xEF\xBB\xBFdata:1\n\ndata:2\n\ndata:3"));
    assert_eq!(out.data(), ["2", "3"]);
}

#[test]
fn wpt_format_comments() {
    let long = "x".repeat(2048);
    let message = format!("data:1\r:\0\n:\r\ndata:2\n:{long}\rdata:3\n:data:fail\r:{long}\ndata:4\n");
    let out = conformant(&message_py_no_newline(message.as_bytes()));
    assert_eq!(out.data(), ["1\n2\n3\n4"]);
    assert_eq!(out.comments, 5);
}

#[test]
fn wpt_format_field_data() {
    let out = conformant(&message_py(b"data:\n\ndata\ndata\n\ndata:test"));
    assert_eq!(out.data(), ["", "\n", "test"]);
}

#[test]
fn wpt_format_field_parsing() {
    let message =
        b"data:\0\ndata:  2\rData:1\ndata\0:2\ndata:1\r\0data:4\nda-ta:3\rdata_5\ndata:3\rdata:\r\n data:32\ndata:4\n";
    let out = conformant(&message_py_no_newline(message));
    assert_eq!(out.data(), ["\0\n 2\n1\n3\n\n4"]);
}

#[test]
fn wpt_format_leading_space() {
    let out = conformant(&message_py(b"data:\ttest\rdata: \ndata:test"));
    assert_eq!(out.data(), ["\ttest\n\ntest"]);
}

#[test]
fn wpt_format_newlines() {
    let out = conformant(&message_py_no_newline(b"data:test\r\ndata\ndata:test\r\n\r"));
    assert_eq!(out.data(), ["test\n\ntest"]);
    assert_eq!(out.pending, CLEAN, "the final CR and LF are one CRLF blank line");
}

#[test]
fn wpt_format_field_unknown() {
    let out =
        conformant(&message_py(b"data:test\n data\ndata\nfoobar:xxx\njustsometext\n:thisisacommentyay\ndata:test"));
    assert_eq!(out.data(), ["test\n\ntest"]);
}

#[test]
fn wpt_event_data_message2() {
    let out =
        conformant(b"data:msg\ndata: msg\n\n:\nfalsefield:msg\n\nfalsefield:msg\nData:data\n\ndata\n\ndata:end\n\n");
    assert_eq!(out.pairs(), [("message", "msg\nmsg"), ("message", ""), ("message", "end")]);
}

#[test]
fn wpt_format_field_event() {
    let out = conformant(&message_py(b"event:test\ndata:x\n\ndata:x"));
    assert_eq!(out.pairs(), [("test", "x"), ("message", "x")]);
}

#[test]
fn wpt_format_field_event_empty() {
    let out = conformant(&message_py(b"event: \ndata:data"));
    assert_eq!(out.pairs(), [("message", "data")]);
}

#[test]
fn wpt_format_field_retry() {
    let out = conformant(&message_py(b"retry:02000\ndata:x"));
    assert_eq!(out.reconnection_time, Some(2000), "02000 is decimal, not octal");
    assert_eq!(out.events[0].retry, Some(2000));
}

#[test]
fn wpt_format_field_retry_bogus() {
    let out = conformant(&message_py(b"retry:2000\nretry:1000x\ndata:x"));
    assert_eq!(out.reconnection_time, Some(2000));
    assert_eq!(out.events[0].retry, Some(2000));
}

#[test]
fn wpt_format_field_id_3_last_event_id2() {
    let persists = conformant(b"id: 1\ndata: 1\n\ndata:2\n\n");
    assert_eq!(persists.ids(), ["1", "1"]);
    let changes = conformant(b"id: 1\ndata: 1\n\nid: 2\ndata:2\n\ndata:3\n\n");
    assert_eq!(changes.ids(), ["1", "2", "2"]);
    let resets = conformant(b"id: 1\ndata: 1\n\nid:\ndata:2\n\ndata:3\n\n");
    assert_eq!(resets.ids(), ["1", "", ""]);
    assert_eq!(resets.last_event_id, "");
}

#[test]
fn wpt_format_data_before_final_empty_line() {
    let body = message_py_no_newline(b"retry:1000\ndata:test1\n\nid:test\ndata:test2");
    let out = conformant(&body);
    assert_eq!(out.data(), ["test1"]);
    assert_eq!(out.last_event_id, "", "the undispatched block's id is dropped");
    assert_eq!(out.reconnection_time, Some(1000));
    assert_eq!(out.pending, Some(Pending { partial_line: false, undispatched: Some(23) }));
    // The reconnection gets the same body: the second "test1" still has lastEventId "".
    let mut parser = SseParser::default();
    let first = run_on(&mut parser, &[&body]);
    let second = run_on(&mut parser, &[&body]);
    assert_eq!(first, second);
    assert_eq!(second.ids(), [""]);
}

#[test]
fn wpt_format_null_character() {
    let out = conformant(b"data:\0\n\n");
    assert_eq!(out.data(), ["\0"]);
}

#[test]
fn wpt_format_field_id_null() {
    let out = conformant(&message_py(b"id:\0\0\ndata:x"));
    assert_eq!(out.ids(), [""]);
    assert_eq!(out.last_event_id, "");
    let out = conformant(b"id:1\ndata:x\n\nid:a\0b\ndata:y\n\n");
    assert_eq!(out.ids(), ["1", "1"], "an id with NUL is ignored, not a reset");
}

#[test]
fn wpt_format_utf_8() {
    // Served as text/event-stream;charset=windows-1252: SSE is always UTF-8.
    let out = conformant(&message_py(b"data:ok\xE2\x80\xA6"));
    assert_eq!(out.data(), ["ok\u{2026}"]);
}

// ---- rexxars/eventsource-parser test/parse.test.ts and test/fixtures.ts ----

/// `formatEvent({event: 'done', data: '✔'})`, which ends most of its fixture streams.
const DONE: &[u8] = "event: done\ndata: \u{2714}\n\n".as_bytes();

#[test]
fn eventsource_parser_line_endings() {
    let cr = conformant_chunks(&[b"data: dog\r", b"data: bark\r\r", b"data: cat\r", b"data: meow\r\r", DONE]);
    assert_eq!(cr.pairs(), [("message", "dog\nbark"), ("message", "cat\nmeow"), ("done", "\u{2714}")]);
    let lf = conformant_chunks(&[b"data: cow\n", b"data: moo\n\n", b"data: horse\n", b"data: neigh\n\n", DONE]);
    assert_eq!(lf.data(), ["cow\nmoo", "horse\nneigh", "\u{2714}"]);
    let crlf =
        conformant_chunks(&[b"data: sheep\r\n", b"data: bleat\r\n\r\n", b"data: pig\r\n", b"data: oink\r\n\r\n", DONE]);
    assert_eq!(crlf.data(), ["sheep\nbleat", "pig\noink", "\u{2714}"]);
}

#[test]
fn eventsource_parser_cr_split_across_chunks() {
    // rexxars/eventsource-parser issue #17: a phantom blank line would dispatch "A\nB" early.
    let out = conformant_chunks(&[b"data: A\r\n", b"data: B\r", b"\n", b"data: C\r\n", b"\n"]);
    assert_eq!(out.data(), ["A\nB\nC"]);
    let out = conformant_chunks(&[b"data: one\r", b"\r", b"\n"]);
    assert_eq!(out.data(), ["one"]);
    assert_eq!(out.pending, CLEAN);
}

#[test]
fn eventsource_parser_bom() {
    let bom = b"\xEF\xBB\xBF";
    let out = conformant_chunks(&[
        &[bom, &b"data: bomful 1\n\n"[..]].concat(),
        &[bom, &b"data: bomful 2\n\n"[..]].concat(),
        b"data: bomless 3\n\n",
        DONE,
    ]);
    assert_eq!(out.data(), ["bomful 1", "bomless 3", "\u{2714}"]);
    // A decoded U+FEFF is the same three bytes in UTF-8, and the BOM may be split.
    let out = conformant_chunks(&[b"\xEF", b"\xBB", b"\xBFdata: first\ndata: second\n\n"]);
    assert_eq!(out.data(), ["first\nsecond"]);
}

#[test]
fn eventsource_parser_multiline() {
    let out = conformant_chunks(&[
        b"event: stock\n",
        b"data: YHOO\n",
        b"data: +2\n",
        b"data: 10\n\n",
        b"event: stock\n",
        b"data: GOOG\n",
        b"data: -8\n",
        b"data: 1881\n\n",
        DONE,
    ]);
    assert_eq!(out.pairs(), [("stock", "YHOO\n+2\n10"), ("stock", "GOOG\n-8\n1881"), ("done", "\u{2714}")]);
}

#[test]
fn eventsource_parser_data_field_and_unknown_fields() {
    let out = conformant_chunks(&[b"data:\n\ndata\ndata\n\ndata:test\n\n", DONE]);
    assert_eq!(out.data(), ["", "\n", "test", "\u{2714}"]);
    let out = conformant_chunks(&[
        b"data:abc\n data\ndata\nfoobar:xxx\njustsometext\n:thisisacommentyay\ndata:123\n\n",
        DONE,
    ]);
    assert_eq!(out.data(), ["abc\n\n123", "\u{2714}"]);
    assert_eq!(out.comments, 1);
}

#[test]
fn eventsource_parser_empty_event() {
    let out = conformant_chunks(&[b"event:\ndata: Hello 1\n\n", b"event:\n\n", DONE]);
    assert_eq!(out.pairs(), [("message", "Hello 1"), ("done", "\u{2714}")]);
}

#[test]
fn eventsource_parser_retry() {
    let out = conformant_chunks(&[b"retry:1000\nretry:2000x\ndata:x\n\n"]);
    assert_eq!(out.data(), ["x"]);
    assert_eq!((out.events[0].retry, out.reconnection_time), (Some(1000), Some(1000)));
    // An empty retry is ignored and its block still dispatched.
    let out = conformant_chunks(&[
        "retry: 500\nid: 1\ndata: \u{1F94C}\n\n".as_bytes(),
        "id:2\nretry:\ndata:\u{1F9F9}\n\n".as_bytes(),
        "id: 3\ndata: \u{2705}\n\n".as_bytes(),
    ]);
    assert_eq!(out.data(), ["\u{1F94C}", "\u{1F9F9}", "\u{2705}"]);
    assert_eq!(out.ids(), ["1", "2", "3"]);
    assert_eq!(out.events.iter().map(|e| e.retry).collect::<Vec<_>>(), [Some(500), None, None]);
    assert_eq!(out.reconnection_time, Some(500));
    let out = conformant(b"\nretry: 500\n\ndata: first\n\nretry: 50x\n\ndata: second\n\n");
    assert_eq!((out.data(), out.reconnection_time), (vec!["first", "second"], Some(500)));
}

#[test]
fn eventsource_parser_identified_ticks() {
    let tick = |n: u32| format!("event: tick\nretry: 50\nid: {n}\ndata: {n}\n\n").into_bytes();
    let (a, b) = (tick(1337), tick(1338));
    let out = conformant_chunks(&[&a, &b]);
    assert_eq!(out.pairs(), [("tick", "1337"), ("tick", "1338")]);
    assert_eq!(out.ids(), ["1337", "1338"]);
    assert_eq!(out.events[1].retry, Some(50));
}

#[test]
fn eventsource_parser_ids() {
    let out = conformant(b"id: 123\nid: bad\0id\ndata: hello\n\n");
    assert_eq!(out.ids(), ["123"]);
    // An id from a block without data is still the last event ID, from its blank line on.
    let mut parser = SseParser::default();
    run_on(&mut parser, &[b"id: 42\n"]);
    assert_eq!(parser.last_event_id(), "", "not before its blank line (and finish drops it)");
    let out = run_on(&mut parser, &[b"id: 42\n", b"\n"]);
    assert_eq!((out.events.len(), out.last_event_id.as_str()), (0, "42"));
    assert_eq!(run_on(&mut parser, &[b"id: bad\0id\n\n"]).last_event_id, "42");
    assert_eq!(run_on(&mut parser, &[b"id:\n\n"]).last_event_id, "");
    for body in [&b"id: 42\r\r"[..], b"id: 42\r\n\r\n"] {
        assert_eq!(conformant(body).last_event_id, "42");
    }
}

#[test]
fn eventsource_parser_mixed_comments() {
    let long = vec![b'x'; 2 * 1024 + 1];
    let chunks: [&[u8]; 6] =
        [b"data:1\r\r:\0\n:\r\ndata:2\n\n:", &long, b"\rdata:3\n\n:data:fail\r:", &long, b"\ndata:4\n\n", b"data:5"];
    let out = conformant_chunks(&chunks);
    assert_eq!(out.data(), ["1", "2", "3", "4"]);
    let data5 = chunks.concat().len() as u64 - 6;
    assert_eq!(out.pending, Some(Pending { partial_line: true, undispatched: Some(data5) }), "data:5 has no newline");
}

#[test]
fn eventsource_parser_comments_and_heartbeats() {
    let emoji_comment = ": \u{1F600} \u{1F389} \u{1F44D}\u{1F3FD} \u{1F1F3}\u{1F1F4} :".as_bytes();
    let mut chunks: Vec<&[u8]> = vec![b": Hello\n\n"];
    let colons = vec![b':'; 300];
    chunks.extend([&colons[..], b"\n", b"data: First\n\n", ": \u{41f}\u{435}\u{440}\u{432}\u{44b}\u{439}".as_bytes()]);
    chunks.extend([": \u{7b2c}\u{4e8c}".as_bytes(), b"\n", b"data: Second\n\n"]);
    chunks.extend([&b": Moop \n"[..]; 10]);
    chunks.extend([": \u{62b}\u{627}\u{644}\u{62b}".as_bytes(), b"\n", b"data: Third\n\n"]);
    chunks.extend([
        ":\u{d28}\u{d3e}\u{d32}\u{d3e}\u{d2e}\u{d24}\u{d4d}\u{d24}\u{d46}".as_bytes(),
        b"\n",
        b"data: Fourth\n\n",
    ]);
    chunks.extend([emoji_comment, b"\n", b"data: Fifth\n\n", DONE]);
    let out = conformant_chunks(&chunks);
    assert_eq!(out.data(), ["First", "Second", "Third", "Fourth", "Fifth", "\u{2714}"]);
    assert_eq!(out.comments, 16);

    let heartbeats: Vec<Vec<u8>> =
        (b'A'..=b'E').map(|c| format!(": \u{2665}\n\ndata: {}\n\n", char::from(c)).into_bytes()).collect();
    let mut chunks: Vec<&[u8]> = heartbeats.iter().map(Vec::as_slice).collect();
    chunks.push(DONE);
    let out = conformant_chunks(&chunks);
    assert_eq!(out.data(), ["A", "B", "C", "D", "E", "\u{2714}"]);
    assert_eq!(out.comments, 5);
}

#[test]
fn eventsource_parser_multibyte() {
    let out = conformant_chunks(&["\n\n\n\nid: 1\ndata: \u{6211}\u{73fe}\u{5728}\u{90fd}\u{770b}\u{5be6}\u{6cc1}\u{4e0d}\u{73a9}\u{904a}\u{6232}\n\n".as_bytes(), DONE]);
    assert_eq!(out.pairs(), [("message", "我現在都看實況不玩遊戲"), ("done", "\u{2714}")]);
    assert_eq!(out.ids(), ["1", "1"]);
}

#[test]
fn eventsource_parser_discarded_lines_and_split_crlf() {
    for chunks in [
        &[&b"data: one\n:"[..], b"ignored\r\ndata: two\n\n"][..],
        &[b"data: one\n:", b"ignored\r", b"\ndata: two\n\n"],
        &[b"data: one\n:", b"ignored\r", b"data: two\n\n"],
        &[b"data: one\n:ignored\r", b"data: two\n\n"],
        &[b"data: one\n:ignored\r", b"\ndata: two\n\n"],
    ] {
        assert_eq!(conformant_chunks(chunks).data(), ["one\ntwo"], "{chunks:?}");
    }
    assert_eq!(conformant_chunks(&[b"data: one\ndata\r", b"\ndata: two\n\n"]).data(), ["one\n\ntwo"]);
    assert_eq!(conformant_chunks(&[b"garbage\r", b"data: ok\n\n"]).data(), ["ok"]);
}

#[test]
fn eventsource_parser_non_sse_body() {
    let json = br#"{"error":"Internal Server Error","message":"The server could not process your request"}"#;
    let out = conformant(&[&json[..], b"\n"].concat());
    assert!(out.events.is_empty());
    assert_eq!(out.pending, CLEAN, "a complete unknown-field line loses nothing");
    let out = conformant(json);
    assert_eq!(out.pending, Some(Pending { partial_line: true, undispatched: None }));
}

// ---- florimondmanca/httpx-sse tests/test_decoders.py, tests/test_event_source.py ----

#[test]
fn httpx_sse_whatwg_examples() {
    let out = conformant_chunks(&[b"data: YH00\n", b"data: +2\n", b"data: 10\n", b"\n"]);
    assert_eq!((out.pairs(), out.ids()), (vec![("message", "YH00\n+2\n10")], vec![""]));
    assert_eq!(out.events[0].retry, None);

    let out = conformant_chunks(&[
        b": test stream\n",
        b"\n",
        b"data: first event\n",
        b"id: 1\n",
        b"\n",
        b"data: second event\n",
        b"id\n",
        b"\n",
        b"data:  third event\n",
        b"\n",
    ]);
    assert_eq!(out.data(), ["first event", "second event", " third event"]);
    assert_eq!(out.ids(), ["1", "", ""]);

    let out = conformant_chunks(&[b"data\n", b"\n", b"data\n", b"data\n", b"\n", b"data:\n"]);
    assert_eq!(out.data(), ["", "\n"]);
    assert_eq!(out.pending, Some(Pending { partial_line: false, undispatched: Some(17) }));

    let out = conformant_chunks(&[b"data:test\n", b"\n", b"data: test\n", b"\n"]);
    assert_eq!(out.data(), ["test", "test"]);
}

#[test]
fn httpx_sse_fields() {
    let out = conformant_chunks(&[b"event: logline\n", b"data: New user connected\n", b"\n"]);
    assert_eq!(out.pairs(), [("logline", "New user connected")]);
    assert_eq!(conformant_chunks(&[b"data: test\n", b"id: 123\0\n", b"\n"]).ids(), [""]);
    assert!(conformant(b"something: ignore\n\n").events.is_empty());
    let out = conformant(b"event: message\ndata: {\"text\":\"Hello\xe2\x80\xa8World\"}\n\n");
    assert_eq!(out.data(), ["{\"text\":\"Hello\u{2028}World\"}"], "U+2028 does not end a line");
}

#[test]
fn httpx_sse_retry_without_data_is_not_an_event() {
    // httpx-sse dispatches this as an event with data ""; the spec does not (WIRE.md §1.5).
    let out = conformant(b"retry: 10000\n\n");
    assert!(out.events.is_empty());
    assert_eq!(out.reconnection_time, Some(10000));
    let out = conformant(b"retry: 1667a\n\n");
    assert_eq!((out.events.len(), out.reconnection_time), (0, None));
    // int() would take these; the spec does not.
    assert_eq!(conformant(b"retry:  10\n\nretry:+10\n\nretry:-5\n\n").reconnection_time, None);
}
