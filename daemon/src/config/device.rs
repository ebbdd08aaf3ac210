//! The device the models run on and the NLI model file (precision) that runs.

/// Where the models run. `Auto` (the default) uses CUDA when it loads, else the CPU, and the
/// engine says why CUDA was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Auto,
    Cpu,
    Cuda,
}

impl Device {
    pub fn parse(s: &str) -> Result<Device, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Device::Auto),
            "cpu" => Ok(Device::Cpu),
            "cuda" | "gpu" => Ok(Device::Cuda),
            other => Err(format!(
                "unknown device {other:?}: valid devices are \"auto\", \"cpu\" and \"cuda\""
            )),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Device::Auto => "auto",
            Device::Cpu => "cpu",
            Device::Cuda => "cuda",
        }
    }
}

/// Which file of the NLI model runs (see `crate::engine::variants`). `Auto`: int8 on the CPU
/// when `uqd models optimize` wrote it, fp16 on CUDA when written, else fp32. `Original`: the
/// model directory's own `model.onnx`, never a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    Auto,
    Original,
    Fp32,
    Int8,
    Fp16,
}

impl Precision {
    pub fn parse(s: &str) -> Result<Precision, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Precision::Auto),
            "original" => Ok(Precision::Original),
            "fp32" => Ok(Precision::Fp32),
            "int8" => Ok(Precision::Int8),
            "fp16" => Ok(Precision::Fp16),
            other => Err(format!(
                "unknown precision {other:?}: valid precisions are \"auto\", \"fp32\", \"int8\", \"fp16\" and \"original\""
            )),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Precision::Auto => "auto",
            Precision::Original => "original",
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
            Precision::Fp16 => "fp16",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stand-in NLI model's time per batch in ms (`--nli-stand-in-ms`, for the benches: see
/// `crate::engine::stand_in`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StandInMs(pub f64);

impl StandInMs {
    pub fn parse(s: &str) -> Result<StandInMs, String> {
        let fix = "give the stand-in NLI model's milliseconds per batch, from 0 (no time) to \
                   60000, e.g. 27.5";
        match s.trim().parse::<f64>() {
            Ok(ms) if (0.0..=60000.0).contains(&ms) => Ok(StandInMs(ms)),
            _ => Err(format!("{s:?} is not a time per batch: {fix}")),
        }
    }

    pub fn per_batch(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.0 / 1000.0)
    }
}
