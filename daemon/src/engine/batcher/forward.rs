//! What runs the batches: a local ONNX Runtime session, the bench's stand-in or an inference
//! server, behind one trait; and one pass of it, checked.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::engine::onnx::{OnnxModel, Output, SeqRef};

use super::queue::EncodedWindow;

/// What runs one batch of windows: a local ONNX Runtime session, the bench's stand-in or an
/// inference server. Shared by the workers of its overlap: it runs their batches one at a time
/// where the device needs that (a session's lock), and prepares them beside each other.
pub trait Forward: Send + Sync {
    /// The logits of `seqs`, `[seqs.len(), labels]`.
    fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String>;
    /// The name of the output that is read (for messages).
    fn output_name(&self) -> &str;
    /// Whether it runs one window per forward pass anyway (dynamic int8): then its worker takes
    /// one window at a time from the queue, so that every worker stays busy.
    fn one_at_a_time(&self) -> bool {
        false
    }
}

impl Forward for OnnxModel {
    fn run(&self, seqs: &[SeqRef<'_>]) -> Result<Output, String> {
        OnnxModel::run(self, seqs)
    }
    fn output_name(&self) -> &str {
        OnnxModel::output_name(self)
    }
    fn one_at_a_time(&self) -> bool {
        self.row_at_a_time
    }
}

/// The output of `windows`' pass, checked to be `[windows, labels]`.
pub(super) fn forward(model: &dyn Forward, windows: &[&EncodedWindow]) -> Result<Output, String> {
    let seqs: Vec<SeqRef<'_>> = windows
        .iter()
        .map(|w| SeqRef {
            ids: &w.ids,
            type_ids: &w.type_ids,
        })
        .collect();
    let out = match catch_unwind(AssertUnwindSafe(|| model.run(&seqs))) {
        Ok(r) => r?,
        Err(_) => return Err("internal error: the NLI forward pass panicked".into()),
    };
    if out.shape.len() != 2 || out.shape[0] != windows.len() || out.shape[1] == 0 {
        return Err(format!(
            "NLI model output {:?} has shape {:?}; expected [batch, labels]",
            model.output_name(),
            out.shape
        ));
    }
    Ok(out)
}
