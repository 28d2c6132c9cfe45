//! One integration test binary driving the real `fisk-admin` in fresh temp
//! dirs. Each area of the tool has its own module file.

mod nats_support;
mod support;

mod corpus;
mod docs;
mod jetstream;
mod read;
mod schema;
