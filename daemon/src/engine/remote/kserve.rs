//! The KServe v2 protocol's JSON: the model's metadata (its signature), the request of one batch
//! and the output tensor of its reply.

use serde::{Deserialize, Serialize};

use crate::engine::onnx::{padded_len, InputKind, IntType, Output, SeqRef};

/// The inputs a model declares (name, kind, integer type), in its order.
pub(super) type Inputs = Vec<(String, InputKind, IntType)>;

#[derive(Deserialize)]
pub(super) struct Metadata {
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
pub(super) fn server_error(body: &str) -> String {
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

impl Metadata {
    /// The inputs and the output (`logits`, else the first) of the model's metadata, checked as
    /// a local model's are; `what` names the model in the errors.
    pub fn signature(self, what: &str) -> Result<(Inputs, String), String> {
        let mut inputs = Vec::new();
        for m in self.inputs {
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
            inputs.push((m.name, kind, ty));
        }
        if !inputs.iter().any(|(_, k, _)| *k == InputKind::Ids) {
            return Err(format!("{what} has no input named input_ids"));
        }
        let output = self
            .outputs
            .iter()
            .find(|o| o.name == "logits")
            .or_else(|| self.outputs.first())
            .map(|o| o.name.clone())
            .ok_or_else(|| format!("{what} has no outputs"))?;
        Ok((inputs, output))
    }
}

/// The request body of one batch: `inputs` of `seqs` padded to the longest (pad id `pad_id`),
/// asking for `output`.
pub(super) fn request_body(
    inputs: &Inputs,
    output: &str,
    pad_id: u32,
    seqs: &[SeqRef<'_>],
) -> Result<Vec<u8>, String> {
    let l = padded_len(seqs);
    let inputs = inputs
        .iter()
        .map(|(name, kind, ty)| {
            let data = kind.data(seqs, l, pad_id);
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
        outputs: [OutputName { name: output }],
    })
    .map_err(|e| format!("cannot encode the NLI request: {e}"))
}

/// The output `output` of the reply `text` to a batch of `rows`, checked to be `[rows, labels]`;
/// the error says why the reply is not a KServe v2 inference response.
pub(super) fn read_reply(text: &str, output: &str, rows: usize) -> Result<Output, String> {
    let resp: InferResponse = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let out = resp
        .outputs
        .into_iter()
        .find(|o| o.name == output)
        .ok_or_else(|| format!("no output {output:?}"))?;
    let mut data = Vec::new();
    flatten(&out.data, &mut data).map_err(|e| format!("output data: {e}"))?;
    let shape: Vec<usize> = out.shape.iter().map(|&d| d.max(0) as usize).collect();
    if shape.len() != 2 || shape[0] != rows || shape[0] * shape[1] != data.len() {
        return Err(format!(
            "output {output:?} has shape {:?} and {} values; expected [{rows}, labels]",
            out.shape,
            data.len()
        ));
    }
    Ok(Output {
        shape,
        data,
        timing: Default::default(),
    })
}
