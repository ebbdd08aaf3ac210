//! The engine and LLM service every benchmark but `load` runs on.

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
