//! Where the NLI model's forward passes run: local ONNX Runtime sessions (the file `--precision`
//! picks for the device it gets), the inference servers of `--nli-backend`, or the bench's
//! stand-in; and what `info` says of that.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, Device, NliBackend, Precision, StandInMs};

use super::batcher::Forward;
use super::defaults::{self, DeviceDefaults};
use super::onnx::OnnxModel;
use super::ort_env;
use super::remote;
use super::stand_in::StandIn;
use super::variants::{self, Variants};

/// What `info` says of how the NLI forward passes run.
pub(crate) struct RunInfo {
    /// Device actually used ("cpu", "cuda", "remote" or "stand-in").
    pub device: String,
    /// Why CUDA is not used when the device setting asked for it.
    pub device_note: Option<String>,
    pub precision: String,
    /// Why `--precision auto` does not run the variant it prefers.
    pub precision_note: Option<String>,
    pub nli_file: String,
    pub attention_fused: Option<bool>,
}

/// How the NLI forward passes run: the batcher's runners and what `info` says of them.
pub(crate) struct NliRun {
    pub runners: Vec<Arc<dyn Forward>>,
    /// Batches in flight per runner unless `--nli-overlap` says.
    pub overlap: usize,
    pub info: RunInfo,
    /// Where the embedding model is to run.
    pub embed_device: Device,
    /// The defaults of the device the model runs on.
    pub defaults: DeviceDefaults,
    pub remote: Option<Arc<remote::Remote>>,
}

impl NliRun {
    /// The runners `cfg` asks for: the inference servers (`--nli-backend`), the stand-in
    /// (`--nli-stand-in-ms`, for a model of `labels` labels) or local sessions; not both of the
    /// first two.
    pub fn start(cfg: &Config, labels: usize, pad_id: u32) -> Result<NliRun, String> {
        match (&cfg.nli_backend, cfg.nli_stand_in_ms) {
            (Some(_), Some(_)) => Err(
                "--nli-stand-in-ms and --nli-backend are both set: the stand-in \
                            replaces the NLI model wherever it runs; unset one of them"
                    .into(),
            ),
            (Some(b), None) => remote_nli(b, pad_id),
            (None, Some(ms)) => Ok(stand_in_nli(cfg, ms, labels, pad_id)),
            (None, None) => local_nli(cfg, pad_id),
        }
    }
}

/// The NLI batch: `--max-batch` when given (even at a device's default value), else the
/// default of the device the model runs on (16 on the CPU and for inference servers, 128 on
/// CUDA).
pub(crate) fn nli_batch(cfg: &Config, defaults: &DeviceDefaults) -> usize {
    cfg.max_batch.unwrap_or(defaults.max_batch).max(1)
}

/// Batcher workers per inference-server endpoint: one request in flight while the next is made.
const WORKERS_PER_ENDPOINT: usize = 2;

/// The NLI model on the inference servers of `backend`.
fn remote_nli(backend: &NliBackend, pad_id: u32) -> Result<NliRun, String> {
    let r = Arc::new(remote::Remote::connect(backend, pad_id)?);
    remote::start_health_checks(&r, Duration::from_millis(backend.health_ms))?;
    let runners: Vec<Arc<dyn Forward>> = (0..WORKERS_PER_ENDPOINT * r.endpoint_count())
        .map(|_| Arc::new(remote::RemoteRunner(r.clone())) as Arc<dyn Forward>)
        .collect();
    Ok(NliRun {
        overlap: 1,
        info: RunInfo {
            device: "remote".into(),
            device_note: None,
            precision_note: None,
            precision: "remote".into(),
            nli_file: r.describe(),
            attention_fused: None,
        },
        embed_device: Device::Cpu,
        defaults: defaults::CPU,
        remote: Some(r),
        runners,
    })
}

/// The NLI model in local ONNX Runtime sessions: on the CPU `cfg.nli_sessions` of them (default:
/// 2 for a model that runs one window per pass, dynamic int8, when there are 2 threads or more,
/// else 1), sharing `cfg.threads`; on CUDA one. On 2 cores two one-thread int8 sessions run 1.4×
/// the pairs/s of one two-thread session, while the batched fp32 model runs best as one session
/// whose worker sorts a large pool into batches (docs/design.md, "Batching").
fn local_nli(cfg: &Config, pad_id: u32) -> Result<NliRun, String> {
    let env = ort_env::init(&cfg.ort_lib)?;
    let sessions_for = |p: Precision| {
        cfg.nli_sessions
            .unwrap_or(if p == Precision::Int8 && cfg.threads >= 2 {
                2
            } else {
                1
            })
    };
    let threads_for = |p: Precision| (cfg.threads / sessions_for(p)).max(1);
    let (model, precision, precision_note) = load_nli_model(&env, cfg, pad_id, &threads_for)?;
    let device = model.device;
    let sessions = if device == Device::Cuda {
        1
    } else {
        sessions_for(precision)
    };
    let (file, row_at_a_time) = (std::path::PathBuf::from(&model.path), model.row_at_a_time);
    let mut runners: Vec<Arc<dyn Forward>> = Vec::with_capacity(sessions);
    for _ in 1..sessions {
        let mut m = OnnxModel::load(
            &env,
            &file,
            threads_for(precision),
            Device::Cpu,
            "logits",
            pad_id,
        )?;
        m.row_at_a_time = row_at_a_time;
        runners.push(Arc::new(m));
    }
    // The batch (`nli_batch`), the windows in flight per call and the overlap follow the device.
    let defaults = DeviceDefaults::of(device);
    Ok(NliRun {
        overlap: defaults.overlap,
        info: RunInfo {
            device: device.as_str().to_string(),
            device_note: model.cuda_not_used.clone(),
            precision_note,
            precision: precision.as_str().to_string(),
            nli_file: model.path.clone(),
            attention_fused: variants::attention_fused(Path::new(&model.path)),
        },
        embed_device: device,
        defaults,
        remote: None,
        runners: std::iter::once(Arc::new(model) as Arc<dyn Forward>)
            .chain(runners)
            .collect(),
    })
}

/// The bench's stand-in in place of the NLI model (`--nli-stand-in-ms`): one device, with the
/// defaults of CUDA (a card is what it stands in for) unless `--device cpu`, and 2 batches in
/// flight unless `--nli-overlap` says.
fn stand_in_nli(cfg: &Config, ms: StandInMs, labels: usize, pad_id: u32) -> NliRun {
    let defaults = DeviceDefaults::of(match cfg.device {
        Device::Cpu => Device::Cpu,
        Device::Auto | Device::Cuda => Device::Cuda,
    });
    NliRun {
        runners: vec![Arc::new(StandIn::new(ms.per_batch(), labels, pad_id))],
        overlap: defaults::STAND_IN_OVERLAP,
        info: RunInfo {
            device: "stand-in".into(),
            device_note: None,
            precision_note: None,
            precision: "stand-in".into(),
            nli_file: format!("stand-in: {} ms per batch", ms.0),
            attention_fused: None,
        },
        embed_device: Device::Cpu,
        defaults,
        remote: None,
    }
}

/// Loads the NLI model file that `cfg.precision` picks for the device it gets (see `variants`):
/// with `auto`/`cuda` devices CUDA is tried when the ONNX Runtime library has it, and when it
/// does not load, the file the precision picks for the CPU runs.
/// On the CPU the session gets `cpu_threads(precision)` intra-op threads, on CUDA `cfg.threads`.
/// Also returns why `--precision auto` does not run its preferred variant, if it does not.
fn load_nli_model(
    env: &ort::environment::Environment,
    cfg: &Config,
    pad_id: u32,
    cpu_threads: &dyn Fn(Precision) -> usize,
) -> Result<(OnnxModel, Precision, Option<String>), String> {
    let variants = Variants::find(&cfg.nli_model, &cfg.variants_dir);
    if let Some(n) = &variants.note {
        eprintln!("uqd: {n}");
    }
    let pick = |device| variants.pick(&cfg.nli_model, cfg.precision, device);
    // `auto` that cannot run the variant it prefers says so, naming the fix (never silently 3×
    // slower).
    let auto_note = |device| {
        let note = (cfg.precision == Precision::Auto)
            .then(|| variants.auto_note(&cfg.nli_model, device))
            .flatten();
        if let Some(n) = &note {
            eprintln!("uqd: {n}");
        }
        note
    };
    let load = |file: &Path, device, threads| {
        OnnxModel::load(env, file, threads, device, "logits", pad_id)
    };
    let mut cuda_note = None;
    if cfg.device != Device::Cpu {
        match ort_env::cuda_missing(&cfg.ort_lib) {
            None => {
                let (file, precision) = pick(Device::Cuda)?;
                let mut model = load(&file, Device::Cuda, cfg.threads)?;
                model.row_at_a_time = precision == Precision::Int8;
                if model.device == Device::Cuda {
                    return Ok((model, precision, auto_note(Device::Cuda)));
                }
                cuda_note = model.cuda_not_used.clone();
                // It fell back to the CPU: keep it when it is the CPU's file with the CPU's threads.
                if pick(Device::Cpu)?.0 == file && cpu_threads(precision) == cfg.threads {
                    return Ok((model, precision, auto_note(Device::Cpu)));
                }
            }
            Some(why) => {
                // `auto` with the CPU build is the usual case: the reason goes to `uqd status`
                // and uq_debug(), and to stderr only when CUDA was asked for.
                if cfg.device == Device::Cuda {
                    eprintln!("uqd: CUDA not used ({why}); running on the CPU");
                }
                cuda_note = Some(why);
            }
        }
    }
    let (file, precision) = pick(Device::Cpu)?;
    let mut model = load(&file, Device::Cpu, cpu_threads(precision))?;
    model.cuda_not_used = cuda_note;
    // Dynamic int8: one window per forward pass, so that a pair's probabilities do not depend on
    // what else shares its batch (see `OnnxModel::row_at_a_time`).
    model.row_at_a_time = precision == Precision::Int8;
    Ok((model, precision, auto_note(Device::Cpu)))
}
