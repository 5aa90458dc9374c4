//! `canonical`: the canonical v1 session codec (`read_session`, `write`). No header: the whole
//! input is the document.
//!
//! Invariants:
//! - what `read_session` accepts, `write` writes (never an error), as JSON that `validate` accepts;
//! - that output reads back and writes again to the very same bytes (a fixed point);
//! - `read_session` only accepts JSON (strictly, by `validate`) and its errors carry an offset
//!   inside the input.

use msgwire_core::canonical::{read_session, write};
use msgwire_core::partial::{validate, validate_bytes};

pub fn check(data: &[u8]) {
    let session = match read_session(data) {
        Ok(session) => session,
        Err(err) => {
            if let Some(offset) = err.offset {
                assert!(offset <= data.len(), "error offset {offset} past the input ({} bytes)", data.len());
            }
            return;
        }
    };
    assert_eq!(validate_bytes(data, 1000), Ok(()), "read_session accepted a document that is not JSON");
    let written = write(&session).expect("a session read writes");
    let text = std::str::from_utf8(&written).expect("UTF-8");
    assert_eq!(validate(text, 1000), Ok(()), "written is JSON: {text}");
    let reread = read_session(&written).unwrap_or_else(|e| panic!("written does not read back: {e}: {text}"));
    let again = write(&reread).expect("writes");
    assert_eq!(std::str::from_utf8(&again).expect("UTF-8"), text, "write(read(write(x))) differs from write(x)");
}
