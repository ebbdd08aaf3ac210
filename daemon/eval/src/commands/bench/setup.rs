//! The engine and LLM service every benchmark but `load` runs on, and the clients it is driven
//! with.

use uqd::config::{CliOverrides, Config};
use uqd::engine::Engine;
use uqd::role_llms::LlmService;

/// What every benchmark needs: the loaded models and the LLM service (`samples` ≥ 1).
pub(super) fn setup(config: CliOverrides, samples: usize) -> Result<(Engine, LlmService), String> {
    if samples == 0 {
        return Err("--samples must be at least 1".into());
    }
    let config = Config::resolve(config)?;
    let engine = Engine::load(&config)?;
    let llm = LlmService::new(config.cache_db.clone(), config.local_llm.clone())?;
    Ok((engine, llm))
}

/// `--clients`, else the device's default (8 on the CPU, 32 on CUDA).
pub(super) fn clients(given: Option<usize>, engine: &Engine) -> usize {
    given.unwrap_or(engine.device_defaults().bench_clients)
}
