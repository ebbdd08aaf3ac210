//! `uqd serve`: load the models and serve the socket in the foreground.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{CliOverrides, Config};
use crate::engine::Engine;
use crate::role_llms::LlmService;
use crate::{client, server};

pub fn run(args: CliOverrides) -> Result<ExitCode, String> {
    let config = Config::resolve(args)?;
    uq_core::paths::check_socket_path(&config.socket)?;
    if client::ping(&config.socket, Duration::from_secs(2)).is_ok() {
        return Err(format!(
            "another uqd is already serving {}; stop it with `uqd stop`",
            config.socket.display()
        ));
    }
    let t = Instant::now();
    let engine = Engine::load(&config)?;
    let info = engine.info();
    eprintln!(
        "uqd: loaded NLI {} and embeddings {} on {} in {:.1}s",
        info.nli_model,
        info.embed_model.as_deref().unwrap_or("(none)"),
        info.device,
        t.elapsed().as_secs_f64()
    );
    let llm = LlmService::new(config.cache_db.clone(), config.local_llm.clone())?;
    eprintln!(
        "uqd: LLM completion cache {}, local LLM {} (loaded on first use)",
        config.cache_db.display(),
        config.local_llm.display()
    );
    Arc::new(server::Server::new(
        Arc::new(engine),
        Arc::new(llm),
        config.socket,
    ))
    .run()?;
    Ok(ExitCode::SUCCESS)
}
