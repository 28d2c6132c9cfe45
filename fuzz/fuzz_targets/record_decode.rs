#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::record_decode(data));
