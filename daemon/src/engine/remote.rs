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

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::NliBackend;

use super::batcher::Forward;
use super::onnx::{padded_len, InputKind, IntType, Output, SeqRef};

struct Endpoint {
    /// Base URL, e.g. `http://127.0.0.1:8000`.
    url: String,
    healthy: AtomicBool,
    /// Requests it answered.
    served: AtomicU64,
    /// Requests and health checks it failed.
    failures: AtomicU64,
    last_error: Mutex<Option<String>>,
}

/// The state of one endpoint, for `uqd status` and `uq_debug()`.
pub use uq_core::protocol::NliEndpoint as EndpointInfo;

/// The client of the NLI model on the inference servers, shared by the batcher's workers.
pub struct Remote {
    endpoints: Vec<Endpoint>,
    model: String,
    /// The inputs the model declares (name, kind, integer type), in its order.
    inputs: Vec<(String, InputKind, IntType)>,
    output: String,
    pad_id: u32,
    retries: usize,
    timeout: Duration,
    client: reqwest::Client,
    /// Runs the HTTP futures; `None` once dropped.
    rt: Option<tokio::runtime::Runtime>,
    turn: AtomicUsize,
}

/// Why one attempt failed, and whether the endpoint is to be taken out.
struct Failure {
    message: String,
    take_out: bool,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    inputs: Vec<TensorMeta>,
    #[serde(default)]
    outputs: Vec<TensorMeta>,
}

#[derive(Deserialize)]
struct TensorMeta {
    name: String,
    #[serde(default)]
    datatype: String,
}

#[derive(Serialize)]
struct InferInput<'a> {
    name: &'a str,
    shape: [usize; 2],
    datatype: &'static str,
    data: Data,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Data {
    I64(Vec<i64>),
    I32(Vec<i32>),
}

#[derive(Serialize)]
struct InferRequest<'a> {
    inputs: Vec<InferInput<'a>>,
    outputs: [OutputName<'a>; 1],
}

#[derive(Serialize)]
struct OutputName<'a> {
    name: &'a str,
}

#[derive(Deserialize)]
struct InferResponse {
    #[serde(default)]
    outputs: Vec<OutputTensor>,
}

#[derive(Deserialize)]
struct OutputTensor {
    name: String,
    #[serde(default)]
    shape: Vec<i64>,
    #[serde(default)]
    data: serde_json::Value,
}

/// The server's `{"error": "..."}` text of a failed request, else the body's start.
fn server_error(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
        .unwrap_or_else(|| body.chars().take(300).collect())
}

/// Every number of a flat or nested JSON array, in row-major order.
fn flatten(v: &serde_json::Value, out: &mut Vec<f32>) -> Result<(), String> {
    match v {
        serde_json::Value::Array(a) => a.iter().try_for_each(|x| flatten(x, out)),
        serde_json::Value::Number(n) => {
            out.push(n.as_f64().ok_or("a non-finite number")? as f32);
            Ok(())
        }
        other => Err(format!("{other} is not a number")),
    }
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
            endpoints: cfg
                .urls
                .iter()
                .map(|u| Endpoint {
                    url: u.clone(),
                    healthy: AtomicBool::new(false),
                    served: AtomicU64::new(0),
                    failures: AtomicU64::new(0),
                    last_error: Mutex::new(None),
                })
                .collect(),
            model: cfg.model.clone(),
            inputs: Vec::new(),
            output: String::new(),
            pad_id,
            retries: cfg.retries,
            timeout,
            client,
            rt: Some(rt),
            turn: AtomicUsize::new(0),
        };
        let mut errors = Vec::new();
        let mut meta = None;
        for i in 0..remote.endpoints.len() {
            match remote.metadata(i) {
                Ok(m) => {
                    remote.endpoints[i].healthy.store(true, Ordering::SeqCst);
                    meta.get_or_insert(m);
                }
                Err(e) => {
                    remote.note_failure(i, &e);
                    errors.push(format!("{}: {e}", remote.endpoints[i].url));
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
        remote.set_signature(meta)?;
        Ok(remote)
    }

    /// The inputs and the output of the model's metadata, checked as a local model's are.
    fn set_signature(&mut self, meta: Metadata) -> Result<(), String> {
        let what = format!("NLI model {:?} on {}", self.model, self.endpoints[0].url);
        for m in meta.inputs {
            let kind = InputKind::from_name(&m.name).ok_or_else(|| {
                format!(
                    "{what} has an unsupported input {:?}: uqd sends input_ids, attention_mask and token_type_ids \
                     (serve the ONNX model the NLI model directory holds)",
                    m.name
                )
            })?;
            let ty = match m.datatype.as_str() {
                "INT64" => IntType::I64,
                "INT32" => IntType::I32,
                other => {
                    return Err(format!(
                        "{what} input {:?} has datatype {other:?}; expected INT64 or INT32",
                        m.name
                    ))
                }
            };
            self.inputs.push((m.name, kind, ty));
        }
        if !self.inputs.iter().any(|(_, k, _)| *k == InputKind::Ids) {
            return Err(format!("{what} has no input named input_ids"));
        }
        self.output = meta
            .outputs
            .iter()
            .find(|o| o.name == "logits")
            .or_else(|| meta.outputs.first())
            .map(|o| o.name.clone())
            .ok_or_else(|| format!("{what} has no outputs"))?;
        Ok(())
    }

    fn rt(&self) -> &tokio::runtime::Runtime {
        self.rt
            .as_ref()
            .expect("the runtime lives as long as the client")
    }

    fn model_url(&self, i: usize) -> String {
        format!("{}/v2/models/{}", self.endpoints[i].url, self.model)
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

    fn note_failure(&self, i: usize, message: &str) {
        let e = &self.endpoints[i];
        e.failures.fetch_add(1, Ordering::Relaxed);
        *e.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(message.to_string());
    }

    /// Checks every endpoint once: up when its model is ready, down otherwise.
    pub fn check_health(&self) {
        for i in 0..self.endpoints.len() {
            match self.ready(i) {
                Ok(()) => self.endpoints[i].healthy.store(true, Ordering::SeqCst),
                Err(e) => {
                    if self.endpoints[i].healthy.swap(false, Ordering::SeqCst) {
                        eprintln!("uqd: NLI server {} is down: {e}", self.endpoints[i].url);
                    }
                    self.note_failure(i, &e);
                }
            }
        }
    }

    /// The next endpoint in turn that is up; when none is, the next in turn.
    fn pick(&self) -> usize {
        let n = self.endpoints.len();
        let start = self.turn.fetch_add(1, Ordering::Relaxed) % n;
        (0..n)
            .map(|k| (start + k) % n)
            .find(|&i| self.endpoints[i].healthy.load(Ordering::SeqCst))
            .unwrap_or(start)
    }

    /// The request body of one batch.
    fn body(&self, seqs: &[SeqRef<'_>]) -> Result<Vec<u8>, String> {
        let l = padded_len(seqs);
        let inputs = self
            .inputs
            .iter()
            .map(|(name, kind, ty)| {
                let data = kind.data(seqs, l, self.pad_id);
                InferInput {
                    name,
                    shape: [seqs.len(), l],
                    datatype: match ty {
                        IntType::I64 => "INT64",
                        IntType::I32 => "INT32",
                    },
                    data: match ty {
                        IntType::I64 => Data::I64(data),
                        IntType::I32 => Data::I32(data.into_iter().map(|x| x as i32).collect()),
                    },
                }
            })
            .collect();
        serde_json::to_vec(&InferRequest {
            inputs,
            outputs: [OutputName { name: &self.output }],
        })
        .map_err(|e| format!("cannot encode the NLI request: {e}"))
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
        let bad = |why: String| Failure {
            message: format!("POST {url}: the reply is not a KServe v2 inference response: {why}"),
            take_out: false,
        };
        let resp: InferResponse = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let out = resp
            .outputs
            .into_iter()
            .find(|o| o.name == self.output)
            .ok_or_else(|| bad(format!("no output {:?}", self.output)))?;
        let mut data = Vec::new();
        flatten(&out.data, &mut data).map_err(|e| bad(format!("output data: {e}")))?;
        let shape: Vec<usize> = out.shape.iter().map(|&d| d.max(0) as usize).collect();
        if shape.len() != 2 || shape[0] != rows || shape[0] * shape[1] != data.len() {
            return Err(bad(format!(
                "output {:?} has shape {:?} and {} values; expected [{rows}, labels]",
                self.output,
                out.shape,
                data.len()
            )));
        }
        Ok(Output {
            shape,
            data,
            timing: Default::default(),
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
        let body = self.body(seqs)?;
        let mut errors: Vec<String> = Vec::new();
        for attempt in 0..=self.retries {
            let i = self.pick();
            match self.infer(i, &body, seqs.len()) {
                Ok(out) => {
                    self.endpoints[i].served.fetch_add(1, Ordering::Relaxed);
                    return Ok(out);
                }
                Err(f) => {
                    self.note_failure(i, &f.message);
                    if f.take_out && self.endpoints[i].healthy.swap(false, Ordering::SeqCst) {
                        eprintln!(
                            "uqd: NLI server {} taken out: {}",
                            self.endpoints[i].url, f.message
                        );
                    }
                    errors.push(f.message);
                    let any_up = self
                        .endpoints
                        .iter()
                        .any(|e| e.healthy.load(Ordering::SeqCst));
                    if attempt < self.retries && !any_up {
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
        self.endpoints
            .iter()
            .map(|e| EndpointInfo {
                url: e.url.clone(),
                healthy: e.healthy.load(Ordering::SeqCst),
                served: e.served.load(Ordering::Relaxed),
                failures: e.failures.load(Ordering::Relaxed),
                last_error: e
                    .last_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
            })
            .collect()
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
