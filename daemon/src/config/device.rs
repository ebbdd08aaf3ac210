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
