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
        let output = session
            .outputs()
            .iter()
            .find(|o| o.name() == output_name)
            .or_else(|| session.outputs().first())
            .map(|o| o.name().to_string())
            .ok_or_else(|| format!("model {} has no outputs", model_path.display()))?;
        Ok(OnnxModel {
            session: Mutex::new(session),
            inputs,
            output,
            device: loaded.device,
            cuda_not_used: loaded.cuda_not_used,
            row_at_a_time: false,
            pad_id,
            path: model_path.display().to_string(),
        })
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
    /// the inputs are made before the session's lock is taken.
    fn run_batch(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        if seqs.is_empty() {
            return Ok(Output {
                shape: vec![0],
                data: Vec::new(),
                timing: RunTiming::default(),
            });
        }
        let host = CpuTimer::start();
        let b = seqs.len();
        let l = padded_len(seqs);
        let mut values: Vec<(String, SessionInputValue<'static>)> =
            Vec::with_capacity(self.inputs.len());
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
        let inputs_made = host.elapsed();
        let mut session = self.session();
        let ran = Instant::now();
        let outputs = session
            .run(values)
            .map_err(|e| format!("ONNX Runtime failed on {}: {e}", self.path))?;
        let device = ran.elapsed();
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
}
