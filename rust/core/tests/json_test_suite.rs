//! `JSONTestSuite` (`tests/json-test-suite`, see its SOURCE.md): `y_` files must be accepted, `n_`
//! files rejected, by `validate_bytes` and by `PartialJson` fed whole and in small fragments;
//! `i_` files are only reported.

use std::fs;
use std::path::PathBuf;

use msgwire_core::partial::{JsonLimits, PartialJson, validate_bytes};

/// Deep enough for the suite's 500-deep arrays (`i_structure_500_nested_arrays`).
const MAX_DEPTH: usize = 1000;

fn cases(prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/json-test-suite/test_parsing");
    let mut cases: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .filter_map(|path| path.file_name().map(|name| name.to_string_lossy().into_owned()))
        .filter(|name| name.starts_with(prefix))
        .map(|name| {
            let bytes = fs::read(dir.join(&name)).unwrap_or_else(|err| panic!("{name}: {err}"));
            (name, bytes)
        })
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no {prefix}*.json in {}", dir.display());
    cases
}

fn limits() -> JsonLimits {
    JsonLimits { max_depth: MAX_DEPTH, ..JsonLimits::default() }
}

/// The parser after the whole input, fed in the given fragments.
fn fed<'a>(fragments: impl IntoIterator<Item = &'a [u8]>) -> PartialJson {
    let mut parser = PartialJson::new(limits());
    for fragment in fragments {
        if parser.feed_bytes(fragment).is_err() {
            break;
        }
    }
    parser
}

/// Three ways of feeding `bytes`: whole, one byte at a time (raw bytes), one char at a time (`&str`).
fn feedings(bytes: &[u8]) -> Vec<(&'static str, PartialJson)> {
    let mut out = vec![("whole", fed([bytes])), ("byte by byte", fed(bytes.chunks(1)))];
    if let Ok(text) = std::str::from_utf8(bytes) {
        let mut parser = PartialJson::new(limits());
        let mut buf = [0; 4];
        for c in text.chars() {
            if parser.feed(c.encode_utf8(&mut buf)).is_err() {
                break;
            }
        }
        out.push(("char by char", parser));
    }
    out
}

fn snapshot(parser: &PartialJson) -> Vec<u8> {
    let mut out = Vec::new();
    parser.snapshot_json(&mut out);
    out
}

#[test]
fn y_files_are_accepted() {
    for (name, bytes) in cases("y_") {
        if let Err(err) = validate_bytes(&bytes, MAX_DEPTH) {
            panic!("{name}: rejected: {err}");
        }
        let expected = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
        for (how, parser) in feedings(&bytes) {
            assert!(parser.is_complete(), "{name} fed {how}: not complete ({:?})", parser.error());
            let snap = snapshot(&parser);
            let value: serde_json::Value = serde_json::from_slice(&snap)
                .unwrap_or_else(|err| panic!("{name} fed {how}: snapshot {snap:?} is not JSON: {err}"));
            if let Some(expected) = &expected {
                assert_eq!(&value, expected, "{name} fed {how}");
            }
        }
    }
}

#[test]
fn n_files_are_rejected() {
    for (name, bytes) in cases("n_") {
        let err = validate_bytes(&bytes, MAX_DEPTH).expect_err(&name);
        for (how, parser) in feedings(&bytes) {
            assert!(parser.error().is_some() || !parser.is_complete(), "{name} fed {how}: complete");
            // However it is fed, the parser finds the same first problem as the validator.
            assert_eq!(parser.finish(), Err(err.clone()), "{name} fed {how}");
        }
    }
}

#[test]
#[allow(clippy::print_stdout, reason = "the report is the point of this test")]
fn i_files_are_reported() {
    for (name, bytes) in cases("i_") {
        let verdict = match validate_bytes(&bytes, MAX_DEPTH) {
            Ok(()) => "accepted".to_owned(),
            Err(err) => format!("rejected: {err}"),
        };
        // Whatever the verdict, every way of feeding agrees with it.
        for (how, parser) in feedings(&bytes) {
            assert_eq!(parser.finish().is_ok(), verdict == "accepted", "{name} fed {how}");
        }
        println!("{name}: {verdict}");
    }
}
