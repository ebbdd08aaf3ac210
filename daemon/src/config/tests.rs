use super::*;
use std::collections::HashMap;

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("uqd-cfg-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn resolve(cli: CliOverrides, env: &HashMap<&str, String>, exe: &Path) -> Result<Config, String> {
    resolve_with(cli, &|k| env.get(k).cloned(), exe, Path::new("/cwd"))
}

#[test]
fn defaults_relative_to_exe() {
    let exe = tmpdir("exe");
    let env = HashMap::new();
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(c.nli_model, exe.join("models/nli"));
    assert_eq!(c.embed_model, None, "embed dir absent -> None");
    assert_eq!(c.ort_lib, exe.join("lib/libonnxruntime.so.1.31.1"));
    assert_eq!(c.device, Device::Auto);
    assert_eq!(c.precision, Precision::Auto);
    assert_eq!(c.variants_dir, exe.join("models/variants"));
    assert_eq!(c.max_batch, DEFAULT_MAX_BATCH);
    assert_eq!(c.max_wait_ms, DEFAULT_MAX_WAIT_MS);
    assert_eq!(c.nli_max_tokens, None);
    assert_eq!(c.embed_max_tokens, 256);
    assert!(c.threads >= 1);
    std::fs::create_dir_all(exe.join("models/embed")).unwrap();
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(c.embed_model, Some(exe.join("models/embed")));
    // With the CUDA build of `make setup` present, auto and cuda use it, cpu does not.
    std::fs::create_dir_all(exe.join("lib/gpu")).unwrap();
    std::fs::write(exe.join("lib/gpu/libonnxruntime.so.1.31.1"), b"x").unwrap();
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(c.ort_lib, exe.join("lib/gpu/libonnxruntime.so.1.31.1"));
    let cpu = CliOverrides {
        device: Some("cpu".into()),
        ..Default::default()
    };
    let c = resolve(cpu, &env, &exe).unwrap();
    assert_eq!(c.ort_lib, exe.join("lib/libonnxruntime.so.1.31.1"));
}

#[test]
fn precedence_flags_env_file_default() {
    let exe = tmpdir("prec");
    let cfgfile = exe.join("uqd.json");
    std::fs::write(
        &cfgfile,
        r#"{"nli_model": "file_nli", "embed_model": "/abs/file_embed", "threads": 3, "max_batch": 7,
            "device": "cuda", "max_wait_ms": 9, "nli_max_tokens": 128, "ort_lib": "/f/lib.so", "socket": "/f/s.sock"}"#,
    )
    .unwrap();
    let mut env: HashMap<&str, String> = HashMap::new();
    env.insert("UQ_CONFIG", cfgfile.display().to_string());
    // File only.
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(
        c.nli_model,
        exe.join("file_nli"),
        "file paths are relative to the file"
    );
    assert_eq!(c.embed_model, Some(PathBuf::from("/abs/file_embed")));
    assert_eq!(
        (c.threads, c.max_batch, c.max_wait_ms, c.nli_max_tokens),
        (3, 7, 9, Some(128))
    );
    assert_eq!(c.device, Device::Cuda);
    assert_eq!(c.ort_lib, PathBuf::from("/f/lib.so"));
    assert_eq!(c.socket, PathBuf::from("/f/s.sock"));
    // Env beats file.
    env.insert("UQ_NLI_MODEL", "/env/nli".into());
    env.insert("UQ_THREADS", "5".into());
    env.insert("UQ_DEVICE", "CPU".into());
    env.insert("UQ_SOCKET", "/env/s.sock".into());
    env.insert("UQ_MAX_BATCH", "11".into());
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(c.nli_model, PathBuf::from("/env/nli"));
    assert_eq!((c.threads, c.max_batch, c.max_wait_ms), (5, 11, 9));
    assert_eq!(c.device, Device::Cpu);
    assert_eq!(c.socket, PathBuf::from("/env/s.sock"));
    // Flags beat env.
    let cli = CliOverrides {
        nli_model: Some("rel/nli".into()),
        threads: Some(1),
        device: Some("cuda".into()),
        max_batch: Some(2),
        ..Default::default()
    };
    let c = resolve(cli, &env, &exe).unwrap();
    assert_eq!(
        c.nli_model,
        PathBuf::from("/cwd/rel/nli"),
        "flag paths are relative to cwd"
    );
    assert_eq!((c.threads, c.max_batch), (1, 2));
    assert_eq!(c.device, Device::Cuda);
    // --config beats UQ_CONFIG.
    let other = exe.join("other.json");
    std::fs::write(&other, r#"{"max_wait_ms": 1}"#).unwrap();
    let cli = CliOverrides {
        config: Some(other),
        ..Default::default()
    };
    let c = resolve(cli, &env, &exe).unwrap();
    assert_eq!(c.max_wait_ms, 1);
    assert_eq!(c.nli_max_tokens, None);
}

#[test]
fn llm_settings() {
    let exe = tmpdir("llm");
    let mut env: HashMap<&str, String> = HashMap::new();
    env.insert("HOME", "/home/u".into());
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(
        c.cache_db,
        PathBuf::from("/home/u/.cache/uqlite/completions.sqlite")
    );
    assert_eq!(
        c.local_llm,
        exe.join("models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    );
    env.insert("XDG_CACHE_HOME", "/xdg".into());
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(c.cache_db, PathBuf::from("/xdg/uqlite/completions.sqlite"));
    env.insert("XDG_CACHE_HOME", "relative".into());
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(
        c.cache_db,
        PathBuf::from("/home/u/.cache/uqlite/completions.sqlite"),
        "a relative XDG_CACHE_HOME is ignored"
    );
    env.clear();
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert!(c.cache_db.starts_with("/tmp"), "{}", c.cache_db.display());
    // file < env < flag
    let f = exe.join("llm.json");
    std::fs::write(
        &f,
        r#"{"cache_db": "c.sqlite", "local_llm": "/m/file.gguf"}"#,
    )
    .unwrap();
    env.insert("UQ_CONFIG", f.display().to_string());
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(
        (c.cache_db, c.local_llm),
        (exe.join("c.sqlite"), PathBuf::from("/m/file.gguf"))
    );
    env.insert("UQ_CACHE_DB", "/env/c.sqlite".into());
    env.insert("UQ_LOCAL_LLM", "/env/m.gguf".into());
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(
        (c.cache_db, c.local_llm),
        (PathBuf::from("/env/c.sqlite"), PathBuf::from("/env/m.gguf"))
    );
    let cli = CliOverrides {
        cache_db: Some("flag.sqlite".into()),
        local_llm: Some("/flag/m.gguf".into()),
        ..Default::default()
    };
    let c = resolve(cli, &env, &exe).unwrap();
    assert_eq!(
        (c.cache_db, c.local_llm),
        (
            PathBuf::from("/cwd/flag.sqlite"),
            PathBuf::from("/flag/m.gguf")
        )
    );
}

#[test]
fn bad_values_are_errors() {
    let exe = tmpdir("bad");
    let mut env: HashMap<&str, String> = HashMap::new();
    env.insert("UQ_THREADS", "many".into());
    let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
    assert!(e.contains("UQ_THREADS"), "{e}");
    env.clear();
    env.insert("UQ_DEVICE", "tpu".into());
    let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
    assert!(e.contains("tpu") && e.contains("cuda"), "{e}");
    env.clear();
    env.insert("UQ_PRECISION", "int4".into());
    let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
    assert!(
        e.contains("UQ_PRECISION") && e.contains("int4") && e.contains("int8"),
        "{e}"
    );
    env.remove("UQ_PRECISION");
    env.insert("UQ_NLI_SESSIONS", "0".into());
    let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
    assert!(e.contains("--nli-sessions") && e.contains("1 to 64"), "{e}");
    env.insert("UQ_NLI_SESSIONS", "3".into());
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(c.nli_sessions, Some(3));
    env.remove("UQ_NLI_SESSIONS");
    env.insert("UQ_PRECISION", "INT8".into());
    assert_eq!(
        resolve(CliOverrides::default(), &env, &exe)
            .unwrap()
            .precision,
        Precision::Int8
    );
    let cli = CliOverrides {
        precision: Some("fp16".into()),
        ..Default::default()
    };
    assert_eq!(resolve(cli, &env, &exe).unwrap().precision, Precision::Fp16);
    env.clear();
    let f = exe.join("bad.json");
    std::fs::write(&f, r#"{"max_batchh": 3}"#).unwrap();
    env.insert("UQ_CONFIG", f.display().to_string());
    let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
    assert!(e.contains("max_batchh"), "{e}");
    env.clear();
    let e = resolve(
        CliOverrides {
            max_batch: Some(0),
            ..Default::default()
        },
        &env,
        &exe,
    )
    .unwrap_err();
    assert!(e.contains("max batch"), "{e}");
    env.insert("UQ_CONFIG", "/nonexistent/uq.json".into());
    let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
    assert!(e.contains("/nonexistent/uq.json"), "{e}");
}

#[test]
fn nli_backend_settings() {
    let exe = tmpdir("backend");
    let mut env: HashMap<&str, String> = HashMap::new();
    assert_eq!(
        resolve(CliOverrides::default(), &env, &exe)
            .unwrap()
            .nli_backend,
        None
    );
    // File: one URL or a list; defaults for the rest.
    let f = exe.join("b.json");
    std::fs::write(
        &f,
        r#"{"nli_backend": {"urls": ["http://a:8000/", "http://b:8000/v2"], "retries": 5}}"#,
    )
    .unwrap();
    env.insert("UQ_CONFIG", f.display().to_string());
    let b = resolve(CliOverrides::default(), &env, &exe)
        .unwrap()
        .nli_backend
        .unwrap();
    assert_eq!(b.urls, vec!["http://a:8000", "http://b:8000"]);
    assert_eq!(
        (b.model.as_str(), b.timeout_ms, b.retries, b.health_ms),
        ("nli", 30_000, 5, 2_000)
    );
    std::fs::write(
        &f,
        r#"{"nli_backend": {"urls": "https://one", "model": "mnli", "timeout_ms": 900}}"#,
    )
    .unwrap();
    let b = resolve(CliOverrides::default(), &env, &exe)
        .unwrap()
        .nli_backend
        .unwrap();
    assert_eq!(
        (b.urls, b.model.as_str(), b.timeout_ms),
        (vec!["https://one".to_string()], "mnli", 900)
    );
    // Env beats file, flags beat env.
    env.insert("UQ_NLI_BACKEND", "http://e1:1, http://e2:2".into());
    env.insert("UQ_NLI_BACKEND_RETRIES", "0".into());
    let b = resolve(CliOverrides::default(), &env, &exe)
        .unwrap()
        .nli_backend
        .unwrap();
    assert_eq!((b.urls.len(), b.retries, b.model.as_str()), (2, 0, "mnli"));
    let cli = CliOverrides {
        nli_backend: Some("http://flag:3".into()),
        nli_backend_model: Some("m2".into()),
        nli_backend_health_ms: Some(500),
        ..Default::default()
    };
    let b = resolve(cli, &env, &exe).unwrap().nli_backend.unwrap();
    assert_eq!(
        (b.urls, b.model.as_str(), b.health_ms),
        (vec!["http://flag:3".to_string()], "m2", 500)
    );
    // Bad values name the setting and the fix.
    let bad = |cli: CliOverrides, env: &HashMap<&str, String>| resolve(cli, env, &exe).unwrap_err();
    env.insert("UQ_NLI_BACKEND", "triton:8000".into());
    let e = bad(CliOverrides::default(), &env);
    assert!(
        e.contains("UQ_NLI_BACKEND")
            && e.contains("\"triton:8000\"")
            && e.contains("http://127.0.0.1:8000"),
        "{e}"
    );
    env.insert("UQ_NLI_BACKEND", " , ".into());
    assert!(bad(CliOverrides::default(), &env).contains("UQ_NLI_BACKEND is empty"));
    env.insert("UQ_NLI_BACKEND", "http://x:1".into());
    env.insert("UQ_NLI_BACKEND_TIMEOUT_MS", "5".into());
    assert!(bad(CliOverrides::default(), &env).contains("--nli-backend-timeout-ms"));
    env.remove("UQ_NLI_BACKEND_TIMEOUT_MS");
    env.insert("UQ_NLI_BACKEND_MODEL", "a/b".into());
    assert!(bad(CliOverrides::default(), &env).contains("--nli-backend-model"));
    env.remove("UQ_NLI_BACKEND_MODEL");
    env.insert("UQ_NLI_BACKEND_RETRIES", "lots".into());
    assert!(bad(CliOverrides::default(), &env).contains("UQ_NLI_BACKEND_RETRIES"));
    env.clear();
    std::fs::write(&f, r#"{"nli_backend": {"url": "http://a"}}"#).unwrap();
    env.insert("UQ_CONFIG", f.display().to_string());
    let e = bad(CliOverrides::default(), &env);
    assert!(e.contains("url") && e.contains("nli_backend {urls"), "{e}");
}

#[test]
fn model_dir_check() {
    let d = tmpdir("modeldir");
    let e = check_model_dir(&d.join("nope"), true).unwrap_err();
    assert!(
        e.contains("nope") && e.contains("does not exist") && e.contains("UQ_NLI_MODEL"),
        "{e}"
    );
    let e = check_model_dir(&d, true).unwrap_err();
    assert!(
        e.contains("model.onnx") && e.contains(&d.display().to_string()),
        "{e}"
    );
    assert!(
        e.contains("optimum-cli export onnx --model microsoft/deberta-large-mnli"),
        "{e}"
    );
    std::fs::write(d.join("model.onnx"), b"x").unwrap();
    let e = check_model_dir(&d, true).unwrap_err();
    assert!(e.contains("tokenizer.json"), "{e}");
    std::fs::write(d.join("tokenizer.json"), b"{}").unwrap();
    let e = check_model_dir(&d, true).unwrap_err();
    assert!(e.contains("config.json"), "{e}");
    check_model_dir(&d, false).unwrap();
    let e = check_model_dir(&d.join("nope"), false).unwrap_err();
    assert!(e.contains("UQ_EMBED_MODEL"), "{e}");
    std::fs::write(d.join("config.json"), b"{}").unwrap();
    check_model_dir(&d, true).unwrap();
}

/// The config file's error lists the keys as it always did.
#[test]
fn valid_keys_text() {
    assert_eq!(
        settings::valid_keys(),
        "socket, nli_model, embed_model, ort_lib, device, precision, variants_dir, threads, \
         nli_sessions, max_batch, max_wait_ms, nli_max_tokens, embed_max_tokens, cache_db, \
         local_llm, nli_backend {urls, model, timeout_ms, retries, health_ms}"
    );
}

/// docs/reference.md's settings table is `settings::markdown_table()`; with `UQ_BLESS=1` the
/// test writes it there instead of failing.
#[test]
fn settings_table_matches_docs_reference() {
    use settings::{DOCS_BEGIN, DOCS_END};
    let path = uq_core::generated_docs::reference_md(env!("CARGO_MANIFEST_DIR"));
    let stale = format!(
        "the settings table in {} is not the settings'; run UQ_BLESS=1 cargo test -p uqd \
         settings_table to regenerate it",
        path.display()
    );
    let want = settings::markdown_table();
    uq_core::generated_docs::check_section(&path, DOCS_BEGIN, DOCS_END, &want, &stale);
}
