#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::verify_bytes(data));
