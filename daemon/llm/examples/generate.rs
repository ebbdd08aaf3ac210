//! Generate with the embedded local model:
//! `cargo run -p uq-llm --release --example generate -- MODEL.gguf "prompt" [temperature] [max_tokens] [raw]`
//! Prints the answer, the load time, resident memory and the speed. `UQ_WEIGHTS=q4_1|q8_0|f32`
//! picks the weight format (default f32); `UQ_SHOW_TOKENS=1` prints the prompt's tokens.

use uq_llm::gguf_tokenizer::GgufTokenizer;
use uq_llm::{ChatRequest, LocalModel, LocalSettings};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: generate MODEL.gguf PROMPT [temperature] [max_tokens] [raw]");
        std::process::exit(2);
    }
    let temperature: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let max_tokens: u32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(64);
    let raw = args.get(5).is_some_and(|s| s == "raw");
    let path = std::path::PathBuf::from(&args[1]);
    if std::env::var("UQ_SHOW_TOKENS").is_ok() {
        match GgufTokenizer::from_gguf_file(&path) {
            Ok(t) => {
                let ids = if raw {
                    t.encode(&args[2])
                } else {
                    t.chat_prompt(None, &args[2])
                };
                match ids {
                    Ok(ids) => {
                        let pieces: Vec<String> = ids
                            .iter()
                            .map(|&i| format!("{i}:{:?}", t.decode(&[i]).unwrap_or_default()))
                            .collect();
                        eprintln!("prompt tokens: {}", pieces.join(" "));
                    }
                    Err(e) => eprintln!("{e}"),
                }
            }
            Err(e) => eprintln!("{e}"),
        }
    }
    let t0 = std::time::Instant::now();
    let mut settings = LocalSettings::new(&path);
    settings.weights = match std::env::var("UQ_WEIGHTS").as_deref() {
        Ok("q4_1") => uq_llm::local::WeightFormat::AsIs,
        Ok("q8_0") => uq_llm::local::WeightFormat::Q8_0,
        _ => uq_llm::local::WeightFormat::F32,
    };
    let model = match LocalModel::load(settings) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_default();
    eprintln!(
        "loaded in {:.2}s, resident {rss}",
        t0.elapsed().as_secs_f64()
    );
    let mut req = if raw {
        ChatRequest::raw(args[2].clone())
    } else {
        ChatRequest::new(args[2].clone())
    };
    req = req
        .with_temperature(temperature)
        .with_max_tokens(max_tokens);
    match model.generate_blocking(&req, 0) {
        Ok(g) => {
            println!("{}", g.text);
            eprintln!(
                "prompt {} tokens, {} new tokens in {:.2}s: {:.1} tokens/s",
                g.prompt_tokens,
                g.completion_tokens,
                g.decode_secs,
                g.completion_tokens as f64 / g.decode_secs.max(1e-9)
            );
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
