#![no_main]

use msgwire_core::DialectName;

libfuzzer_sys::fuzz_target!(|data: &[u8]| msgwire_fuzz::dialect::check(DialectName::OpenAiResponses, data));
