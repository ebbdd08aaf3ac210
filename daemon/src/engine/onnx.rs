//! A transformer encoder session with the usual BERT-style inputs: builds padded int tensors for
//! the inputs the model declares (and only those) and reads one float output.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ort::session::{Session, SessionInputValue};
use ort::value::{DynValue, Tensor, TensorElementType, ValueType};

use crate::config::Device;

use super::ort_env;
use super::stages::CpuTimer;

/// What an encoder input holds, known by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputKind {
    Ids,
    Attention,
    TypeIds,
}

impl InputKind {
    /// `input_ids`, `attention_mask` or `token_type_ids`; `None` for any other name.
    pub(crate) fn from_name(name: &str) -> Option<InputKind> {
        match name {
            "input_ids" => Some(InputKind::Ids),
            "attention_mask" => Some(InputKind::Attention),
            "token_type_ids" => Some(InputKind::TypeIds),
            _ => None,
        }
    }

    /// The row-major `[seqs.len(), l]` data of this input for `seqs`, each right-padded to `l`
    /// (pad id, attention 0, type 0).
    pub(crate) fn data(self, seqs: &[SeqRef<'_>], l: usize, pad_id: u32) -> Vec<i64> {
        let mut data: Vec<i64> = Vec::with_capacity(seqs.len() * l);
        for s in seqs {
            let n = s.ids.len();
            match self {
                InputKind::Ids => {
                    data.extend(s.ids.iter().map(|&x| x as i64));
                    data.extend(std::iter::repeat_n(pad_id as i64, l - n));
                }
                InputKind::Attention => {
                    data.extend(std::iter::repeat_n(1i64, n));
                    data.extend(std::iter::repeat_n(0i64, l - n));
                }
                InputKind::TypeIds => {
                    data.extend(s.type_ids.iter().take(n).map(|&x| x as i64));
                    data.extend(std::iter::repeat_n(0i64, l - s.type_ids.len().min(n)));
                }
            }
        }
        data
    }
}

/// The integer type of an encoder input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntType {
    I64,
    I32,
}

/// The longest of `seqs` (at least 1): the padded length of their batch.
pub(crate) fn padded_len(seqs: &[SeqRef<'_>]) -> usize {
    seqs.iter().map(|s| s.ids.len()).max().unwrap_or(0).max(1)
}

/// One sequence to run: token ids and token type ids of equal length (no padding).
#[derive(Debug, Clone, Copy)]
pub struct SeqRef<'a> {
    pub ids: &'a [u32],
    pub type_ids: &'a [u32],
}

/// Why a failed pass is run once more: once, under load, the first passes of a fresh int8
/// session failed with `Non-zero status code returned while running DynamicQuantizeMatMul node
/// … GetElementType is not implemented` and the next worked (docs/design.md, "First passes").
pub const RETRY_NOTE: &str = "a failed pass is retried once: a fresh session's first pass \
                              once failed this way under load and the next one worked";

pub struct OnnxModel {
    /// Behind a lock: the workers that share the session prepare their batches beside each
    /// other and run them one at a time.
    session: Mutex<Session>,
    inputs: Vec<(String, InputKind, IntType)>,
    output: String,
    pub device: Device,
    /// Why CUDA was asked for but not used.
    pub cuda_not_used: Option<String>,
    /// Run each sequence in its own forward pass. Set for dynamically quantized (int8) models:
    /// their activations are quantized with one scale per tensor, so in a batch each row's
    /// result would depend on the other rows (and their padding); alone it does not.
    pub row_at_a_time: bool,
    pad_id: u32,
    pub path: String,
}

#[cfg(test)]
thread_local! {
    /// Tests: the next this many attempts of passes on this thread run with an id past the
    /// vocabulary, so that ONNX Runtime itself fails them.
    pub(crate) static FAIL_NEXT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The float output of one forward pass: `shape` and row-major `data`, and where its time went.
pub struct Output {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
    pub timing: RunTiming,
}

/// Where a forward pass's time went: host work (padding the inputs, copying the output out) and
/// the pass itself (zero both when the runner does not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunTiming {
    pub host: Duration,
    pub device: Duration,
}

impl RunTiming {
    fn add(&mut self, other: RunTiming) {
        self.host += other.host;
        self.device += other.device;
    }
}

/// The inputs `session` declares (name, kind, integer type), in its order: each one uqd feeds,
/// `input_ids` among them.
fn declared_inputs(
    session: &Session,
    model_path: &Path,
) -> Result<Vec<(String, InputKind, IntType)>, String> {
    let mut inputs = Vec::new();
    for inp in session.inputs() {
        let name = inp.name().to_string();
        let kind = InputKind::from_name(&name).ok_or_else(|| {
            format!(
                "model {} has an unsupported input {name:?}: uqd feeds input_ids, attention_mask and \
                 token_type_ids (export the model with `optimum-cli export onnx`)",
                model_path.display()
            )
        })?;
        let ty = match inp.dtype() {
            ValueType::Tensor {
                ty: TensorElementType::Int64,
                ..
            } => IntType::I64,
            ValueType::Tensor {
                ty: TensorElementType::Int32,
                ..
            } => IntType::I32,
            other => {
                return Err(format!(
                    "model {} input {name:?} has type {other:?}; expected an int64 or int32 tensor",
                    model_path.display()
                ))
            }
        };
        inputs.push((name, kind, ty));
    }
    if !inputs.iter().any(|(_, k, _)| *k == InputKind::Ids) {
        return Err(format!(
            "model {} has no input named input_ids",
            model_path.display()
        ));
    }
    Ok(inputs)
}

/// The output of `session` that is read: the one named `output_name`, else its first.
fn read_output(session: &Session, output_name: &str, model_path: &Path) -> Result<String, String> {
    session
        .outputs()
        .iter()
        .find(|o| o.name() == output_name)
        .or_else(|| session.outputs().first())
        .map(|o| o.name().to_string())
        .ok_or_else(|| format!("model {} has no outputs", model_path.display()))
}

impl OnnxModel {
    /// Loads `model_path`. `output_name`: the output to read; when the model has no output of that
    /// name, its first output is used.
    pub fn load(
        env: &ort::environment::Environment,
        model_path: &Path,
        threads: usize,
        device: Device,
        output_name: &str,
        pad_id: u32,
    ) -> Result<OnnxModel, String> {
        let loaded = ort_env::build_session(env, model_path, threads, device)?;
        let session = loaded.session;
        let inputs = declared_inputs(&session, model_path)?;
        let output = read_output(&session, output_name, model_path)?;
        let model = OnnxModel {
            session: Mutex::new(session),
            inputs,
            output,
            device: loaded.device,
            cuda_not_used: loaded.cuda_not_used,
            row_at_a_time: false,
            pad_id,
            path: model_path.display().to_string(),
        };
        // Sessions are loaded one after another, so their first passes run one at a time. One
        // that fails twice is left to the callers' passes (each retried once).
        if let Err(e) = model.warm_up() {
            eprintln!("uqd: {e}; the session is kept and its passes are retried once");
        }
        Ok(model)
    }

    /// The name of the output that is read.
    pub fn output_name(&self) -> &str {
        &self.output
    }

    /// Runs `seqs` (one forward pass, or one per sequence when `row_at_a_time`).
    pub fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        if !self.row_at_a_time || seqs.len() <= 1 {
            return self.run_batch(seqs);
        }
        let mut shape = Vec::new();
        let mut data = Vec::new();
        let mut timing = RunTiming::default();
        for s in seqs {
            let out = self.run_batch(std::slice::from_ref(s))?;
            shape = out.shape;
            data.extend(out.data);
            timing.add(out.timing);
        }
        shape[0] = seqs.len();
        Ok(Output {
            shape,
            data,
            timing,
        })
    }

    fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One forward pass over `seqs`, right-padded to the longest (pad id, attention 0, type 0);
    /// the inputs are made before the session's lock is taken. A pass that fails inside ONNX
    /// Runtime is run once more before it is an error, and the log says so ([`RETRY_NOTE`]).
    fn run_batch(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        if seqs.is_empty() {
            return Ok(Output {
                shape: vec![0],
                data: Vec::new(),
                timing: RunTiming::default(),
            });
        }
        let host = CpuTimer::start();
        let (b, l) = (seqs.len(), padded_len(seqs));
        let values = self.inputs(seqs, l)?;
        #[cfg(test)]
        let values = self.injected_failure(seqs, l)?.unwrap_or(values);
        let inputs_made = host.elapsed();
        let mut session = self.session();
        let ran = Instant::now();
        let first = match session.run(values) {
            Ok(outputs) => return self.output(&outputs, b, inputs_made, ran.elapsed()),
            Err(e) => e.to_string(),
        };
        eprintln!(
            "uqd: ONNX Runtime failed on a pass of {b} rows × {l} tokens of {}: {first}; \
             retrying once ({RETRY_NOTE})",
            self.path
        );
        let values = self.inputs(seqs, l)?;
        #[cfg(test)]
        let values = self.injected_failure(seqs, l)?.unwrap_or(values);
        let ran = Instant::now();
        // (a binding, not the block's value: the session's borrow must end before it does)
        #[allow(clippy::let_and_return)]
        let retried = match session.run(values) {
            Ok(outputs) => {
                eprintln!("uqd: the retried pass of {b} rows of {} worked", self.path);
                self.output(&outputs, b, inputs_made, ran.elapsed())
            }
            Err(e) => Err(format!(
                "ONNX Runtime failed twice on {} (a pass of {b} rows × {l} tokens): {first}; \
                 then {e}",
                self.path
            )),
        };
        retried
    }

    /// Tests: inputs that ONNX Runtime fails on (an id past any vocabulary) while [`FAIL_NEXT`]
    /// counts down.
    #[cfg(test)]
    fn injected_failure(
        &self,
        seqs: &[SeqRef<'_>],
        l: usize,
    ) -> Result<Option<Vec<(String, SessionInputValue<'static>)>>, String> {
        let Some(left) = FAIL_NEXT.get().checked_sub(1) else {
            return Ok(None);
        };
        FAIL_NEXT.set(left);
        let ids = vec![1u32 << 30; l];
        let bad: Vec<SeqRef<'_>> = seqs
            .iter()
            .map(|s| SeqRef {
                ids: &ids,
                type_ids: s.type_ids,
            })
            .collect();
        self.inputs(&bad, l).map(Some)
    }

    /// The model's inputs for `seqs` padded to `l` tokens.
    fn inputs(
        &self,
        seqs: &[SeqRef<'_>],
        l: usize,
    ) -> Result<Vec<(String, SessionInputValue<'static>)>, String> {
        let b = seqs.len();
        let mut values = Vec::with_capacity(self.inputs.len());
        for (name, kind, ty) in &self.inputs {
            let data = kind.data(seqs, l, self.pad_id);
            let shape = vec![b as i64, l as i64];
            let v: DynValue = match ty {
                IntType::I64 => Tensor::from_array((shape, data))
                    .map_err(|e| e.to_string())?
                    .into_dyn(),
                IntType::I32 => {
                    let d: Vec<i32> = data.into_iter().map(|x| x as i32).collect();
                    Tensor::from_array((shape, d))
                        .map_err(|e| e.to_string())?
                        .into_dyn()
                }
            };
            values.push((name.clone(), SessionInputValue::from(v)));
        }
        Ok(values)
    }

    /// The read output of a pass over `b` rows, with its timing.
    fn output(
        &self,
        outputs: &ort::session::SessionOutputs<'_>,
        b: usize,
        inputs_made: Duration,
        device: Duration,
    ) -> Result<Output, String> {
        let copying = CpuTimer::start();
        let out = outputs
            .get(&self.output)
            .ok_or_else(|| format!("model {} produced no output {:?}", self.path, self.output))?;
        let (shape, data) = out.try_extract_tensor::<f32>().map_err(|e| {
            format!(
                "output {:?} of {} is not a float32 tensor: {e}",
                self.output, self.path
            )
        })?;
        let shape: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        if shape.first().copied() != Some(b) {
            return Err(format!(
                "output {:?} of {} has shape {shape:?}; expected batch {b}",
                self.output, self.path
            ));
        }
        let data = data.to_vec();
        Ok(Output {
            shape,
            data,
            timing: RunTiming {
                host: inputs_made + copying.elapsed(),
                device,
            },
        })
    }

    /// One pass over a two-token row, run when the session is loaded, before it serves: its
    /// first pass (where ONNX Runtime finishes setting up its kernels) then never runs beside
    /// another session's first pass under a caller's batch ([`RETRY_NOTE`]).
    fn warm_up(&self) -> Result<(), String> {
        let ids = [self.pad_id, self.pad_id];
        let type_ids = [0, 0];
        self.run_batch(&[SeqRef {
            ids: &ids,
            type_ids: &type_ids,
        }])
        .map(|_| ())
        .map_err(|e| format!("the first pass of {} failed: {e}", self.path))
    }
}
