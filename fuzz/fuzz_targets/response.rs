#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| msgwire_fuzz::response::check(data));
