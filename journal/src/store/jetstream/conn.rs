//! The connection: the tokio runtime this backend owns (the rest of the
//! crate is synchronous), the client and JetStream context built inside it,
//! the error mapping of a stream lookup, and the blocking facade every
//! public function goes through. Also the msg-id nonce, fresh for every
//! open.

use super::JetStreamStore;
use crate::error::{Error, Result};
use crate::nats::{self, Settings};
use async_nats::jetstream::{self, stream};
use std::sync::Arc;

/// A random nonce, fresh for every open (SPEC 8): JetStream de-duplicates by
/// msg id across the whole stream.
pub(super) fn new_nonce() -> Result<String> {
    let mut b = [0u8; 12];
    getrandom::fill(&mut b).map_err(|e| Error::Store {
        context: "JetStream append".into(),
        message: format!("no randomness for the msg id nonce: {e}"),
    })?;
    Ok(crate::digest::hex(&b))
}

fn runtime() -> Result<Arc<tokio::runtime::Runtime>> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("fisk-nats")
        .enable_all()
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Store {
            context: "JetStream".into(),
            message: format!("cannot start the async runtime: {e}"),
        })
}

/// What a connection to one server is: shared by the store and appenders.
#[derive(Clone)]
pub(super) struct Conn {
    pub(super) rt: Arc<tokio::runtime::Runtime>,
    pub(super) js: jetstream::Context,
    pub(super) server: String,
}

impl Conn {
    pub(super) fn open(settings: &Settings) -> Result<Conn> {
        let rt = runtime()?;
        let client = rt.block_on(nats::connect(settings))?;
        // The context spawns its ack handler: it must be built inside the runtime.
        let js = {
            let _inside = rt.enter();
            nats::jetstream(client, settings)
        };
        Ok(Conn {
            rt,
            js,
            server: settings.server_list(),
        })
    }

    pub(super) fn err(&self, stream: &str, message: String) -> Error {
        Error::Store {
            context: format!("stream {stream} on {}", self.server),
            message,
        }
    }

    /// Publish `msg` on `subject` and wait for its ack. `None` when the
    /// connection took no message within the request timeout: a
    /// connection that is down stops taking messages once its buffer is
    /// full.
    pub(super) async fn publish(
        &self,
        subject: String,
        msg: jetstream::message::PublishMessage,
    ) -> Option<std::result::Result<jetstream::publish::PublishAck, jetstream::context::PublishError>>
    {
        match tokio::time::timeout(nats::REQUEST_TIMEOUT, self.js.send_publish(subject, msg)).await
        {
            Ok(Ok(ack)) => Some(ack.await),
            Ok(Err(e)) => Some(Err(e)),
            Err(_) => None,
        }
    }

    /// The stream's info, asked of the server now.
    pub(super) async fn info<'s>(
        &self,
        s: &'s mut stream::Stream,
        name: &str,
    ) -> Result<&'s stream::Info> {
        s.info()
            .await
            .map_err(|e| self.err(name, format!("cannot read the stream's info: {e}")))
    }

    /// The stream's handle and configuration; a missing stream or a server
    /// without JetStream is a clear error.
    pub(super) async fn stream(&self, name: &str) -> Result<stream::Stream> {
        match self.js.get_stream(name).await {
            Ok(s) => Ok(s),
            Err(e) => {
                use async_nats::jetstream::context::GetStreamErrorKind as K;
                let text = e.to_string();
                let msg = match e.kind() {
                    K::JetStream(j) if j.error_code() == async_nats::jetstream::ErrorCode::STREAM_NOT_FOUND => format!(
                        "stream {name} does not exist; create it with `fisk-admin stream create {name} --subject 'PREFIX.>'` (or ask the operator who owns it)"
                    ),
                    K::Request => format!(
                        "no answer from JetStream: is JetStream enabled on this server (nats-server -js), and is the domain or API prefix right? ({text})"
                    ),
                    _ => format!("cannot look up the stream: {text}; is JetStream enabled on this server?"),
                };
                Err(self.err(name, msg))
            }
        }
    }
}

impl JetStreamStore {
    pub(super) fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.conn.rt.block_on(f)
    }

    /// Run `f` as a task on the runtime's workers and wait for it: the
    /// caller's thread sleeps once instead of at every await (what makes
    /// many concurrent callers cheap).
    pub(super) fn run_task<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        let handle = self.conn.rt.spawn(f);
        match self.conn.rt.block_on(handle) {
            Ok(r) => r,
            Err(e) => Err(self.err(None, format!("a JetStream task failed: {e}"))),
        }
    }
}
