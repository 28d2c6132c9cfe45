//! One integration test binary driving the real `fisk-admin` in fresh temp
//! dirs. Each area of the tool has its own module file.

mod support;

mod answer;
mod corpus;
mod crash;
mod fingerprint;
mod repair;
mod runner;
