//! NLI on an inference server (scale-out): the batcher's forward passes go to KServe v2 / Triton
//! Inference Server endpoints over HTTP (`POST {url}/v2/models/{model}/infer`, JSON tensors),
//! while tokenising, windowing, batching, caching and the scores stay in uqd
//! (docs/reference.md, "NLI on an inference server").
//!
//! Several endpoints are used in turn. One that fails a request (connection, time-out, 5xx, 404,
//! 429) or its health check (`GET {url}/v2/models/{model}/ready`, every `health_ms`) is skipped
//! until a health check passes again; a failed request is retried on the next endpoint, `retries`
//! times. When every endpoint is down, requests still try them in turn (with a short pause), so
//! a server that comes back is used at once.

mod endpoints;
mod kserve;

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::config::NliBackend;

use super::batcher::Forward;
use super::onnx::{Output, SeqRef};
use endpoints::Endpoints;
use kserve::{read_reply, request_body, server_error, Inputs, Metadata};

/// The state of one endpoint, for `uqd status` and `uq_debug()`.
pub use uq_core::protocol::NliEndpoint as EndpointInfo;

/// The client of the NLI model on the inference servers, shared by the batcher's workers.
pub struct Remote {
    endpoints: Endpoints,
    model: String,
    /// The inputs the model declares (name, kind, integer type), in its order.
    inputs: Inputs,
    output: String,
    pad_id: u32,
    retries: usize,
    timeout: Duration,
    client: reqwest::Client,
    /// Runs the HTTP futures; `None` once dropped.
    rt: Option<tokio::runtime::Runtime>,
}

/// Why one attempt failed, and whether the endpoint is to be taken out.
struct Failure {
    message: String,
    take_out: bool,
}

impl Remote {
    /// Reads the model's metadata (`GET {url}/v2/models/{model}`) from the first endpoint that
    /// answers; endpoints that do not are marked down (the health checks bring them back).
    pub fn connect(cfg: &NliBackend, pad_id: u32) -> Result<Remote, String> {
        uq_llm::install_crypto_provider();
        let timeout = Duration::from_millis(cfg.timeout_ms);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("uqd-nli-http")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the NLI backend's HTTP runtime: {e}"))?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .pool_max_idle_per_host(8)
            .build()
            .map_err(|e| format!("cannot build the NLI backend's HTTP client: {e}"))?;
        let mut remote = Remote {
            endpoints: Endpoints::new(&cfg.urls),
            model: cfg.model.clone(),
            inputs: Vec::new(),
            output: String::new(),
            pad_id,
            retries: cfg.retries,
            timeout,
            client,
            rt: Some(rt),
        };
        let mut errors = Vec::new();
        let mut meta = None;
        for i in 0..remote.endpoints.len() {
            match remote.metadata(i) {
                Ok(m) => {
                    remote.endpoints.set_up(i);
                    meta.get_or_insert(m);
                }
                Err(e) => {
                    remote.endpoints.note_failure(i, &e);
                    errors.push(format!("{}: {e}", remote.endpoints.url(i)));
                }
            }
        }
        let Some(meta) = meta else {
            return Err(format!(
                "no NLI inference server answered ({}): start the server (e.g. scripts/triton_nli.py), check its URL \
                 (--nli-backend / UQ_NLI_BACKEND) and the model's name (--nli-backend-model / UQ_NLI_BACKEND_MODEL, \
                 now {:?}): `curl URL/v2/models/{}` must answer; or unset UQ_NLI_BACKEND to run the model locally",
                errors.join("; "),
                cfg.model,
                cfg.model
            ));
        };
        let what = format!(
            "NLI model {:?} on {}",
            remote.model,
            remote.endpoints.url(0)
        );
        (remote.inputs, remote.output) = meta.signature(&what)?;
        Ok(remote)
    }

    fn rt(&self) -> &tokio::runtime::Runtime {
        self.rt
            .as_ref()
            .expect("the runtime lives as long as the client")
    }

    fn model_url(&self, i: usize) -> String {
        format!("{}/v2/models/{}", self.endpoints.url(i), self.model)
    }

    fn metadata(&self, i: usize) -> Result<Metadata, String> {
        let url = self.model_url(i);
        self.rt().block_on(async {
            let resp = self
                .client
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("GET {url}: {e}"))?;
            let status = resp.status();
            let body = resp.text().await.map_err(|e| format!("GET {url}: {e}"))?;
            if status.as_u16() == 404 {
                return Err(format!(
                    "the server has no model {:?} ({})",
                    self.model,
                    server_error(&body)
                ));
            }
            if !status.is_success() {
                return Err(format!("GET {url}: HTTP {status}: {}", server_error(&body)));
            }
            serde_json::from_str(&body)
                .map_err(|e| format!("GET {url}: not KServe v2 model metadata: {e}"))
        })
    }

    /// Whether endpoint `i` says the model is ready.
    fn ready(&self, i: usize) -> Result<(), String> {
        let url = format!("{}/ready", self.model_url(i));
        let probe = self.timeout.min(Duration::from_secs(2));
        self.rt().block_on(async {
            let resp = self
                .client
                .get(&url)
                .timeout(probe)
                .send()
                .await
                .map_err(|e| format!("health check {url}: {e}"))?;
            if resp.status().is_success() {
                Ok(())
            } else {
                Err(format!("health check {url}: HTTP {}", resp.status()))
            }
        })
    }

    /// Checks every endpoint once: up when its model is ready, down otherwise.
    pub fn check_health(&self) {
        for i in 0..self.endpoints.len() {
            match self.ready(i) {
                Ok(()) => self.endpoints.set_up(i),
                Err(e) => {
                    if self.endpoints.set_down(i) {
                        eprintln!("uqd: NLI server {} is down: {e}", self.endpoints.url(i));
                    }
                    self.endpoints.note_failure(i, &e);
                }
            }
        }
    }

    /// One attempt on endpoint `i`.
    fn infer(&self, i: usize, body: &[u8], rows: usize) -> Result<Output, Failure> {
        let url = format!("{}/infer", self.model_url(i));
        let down = |message: String| Failure {
            message,
            take_out: true,
        };
        let (status, text) = self
            .rt()
            .block_on(async {
                let resp = self
                    .client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.to_vec())
                    .send()
                    .await?;
                let status = resp.status();
                Ok::<_, reqwest::Error>((status, resp.text().await?))
            })
            .map_err(|e| {
                let what = if e.is_timeout() {
                    format!(
                        "no answer within {} ms (--nli-backend-timeout-ms)",
                        self.timeout.as_millis()
                    )
                } else {
                    e.to_string()
                };
                down(format!("POST {url}: {what}"))
            })?;
        if !status.is_success() {
            let code = status.as_u16();
            return Err(Failure {
                message: format!("POST {url}: HTTP {status}: {}", server_error(&text)),
                take_out: code >= 500 || matches!(code, 404 | 408 | 429),
            });
        }
        read_reply(&text, &self.output, rows).map_err(|why| Failure {
            message: format!("POST {url}: the reply is not a KServe v2 inference response: {why}"),
            take_out: false,
        })
    }

    /// Runs one batch: endpoints in turn, up to `1 + retries` attempts.
    pub fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        if seqs.is_empty() {
            return Ok(Output {
                shape: vec![0],
                data: Vec::new(),
                timing: Default::default(),
            });
        }
        let body = request_body(&self.inputs, &self.output, self.pad_id, seqs)?;
        let mut errors: Vec<String> = Vec::new();
        for attempt in 0..=self.retries {
            let i = self.endpoints.pick();
            match self.infer(i, &body, seqs.len()) {
                Ok(out) => {
                    self.endpoints.note_served(i);
                    return Ok(out);
                }
                Err(f) => {
                    self.endpoints.note_failure(i, &f.message);
                    if f.take_out && self.endpoints.set_down(i) {
                        eprintln!(
                            "uqd: NLI server {} taken out: {}",
                            self.endpoints.url(i),
                            f.message
                        );
                    }
                    errors.push(f.message);
                    if attempt < self.retries && !self.endpoints.any_up() {
                        std::thread::sleep(Duration::from_millis(100 << attempt.min(4)));
                    }
                }
            }
        }
        Err(format!(
            "the NLI inference server failed {} attempt(s): {}. Check the servers (`uqd status` lists them) or \
             raise --nli-backend-retries / UQ_NLI_BACKEND_RETRIES",
            errors.len(),
            errors.join("; ")
        ))
    }

    /// The endpoints' state.
    pub fn endpoints(&self) -> Vec<EndpointInfo> {
        self.endpoints.infos()
    }

    /// What `uqd status` names as the NLI file: the model's URL on each endpoint.
    pub fn describe(&self) -> String {
        (0..self.endpoints.len())
            .map(|i| self.model_url(i))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn endpoint_count(&self) -> usize {
        self.endpoints.len()
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        // Never block (the last owner may be inside another runtime).
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Checks the endpoints every `interval` in a background thread, as long as `remote` lives.
pub fn start_health_checks(remote: &Arc<Remote>, interval: Duration) -> Result<(), String> {
    let weak: Weak<Remote> = Arc::downgrade(remote);
    std::thread::Builder::new()
        .name("uqd-nli-health".into())
        .spawn(move || loop {
            let mut waited = Duration::ZERO;
            while waited < interval {
                let step = Duration::from_millis(50).min(interval - waited);
                std::thread::sleep(step);
                waited += step;
                if weak.strong_count() == 0 {
                    return;
                }
            }
            match weak.upgrade() {
                Some(r) => r.check_health(),
                None => return,
            }
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the NLI health-check thread: {e}"))
}

/// One batcher worker's handle on the shared client.
pub struct RemoteRunner(pub Arc<Remote>);

impl Forward for RemoteRunner {
    fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        self.0.run(seqs)
    }
    fn output_name(&self) -> &str {
        &self.0.output
    }
}
