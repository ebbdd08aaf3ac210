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
    assert_eq!(c.max_batch, None, "the device's batch");
    assert_eq!(c.max_wait_ms, 2);
    assert_eq!(c.busy_timeout_ms, 30_000);
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
        (3, Some(7), 9, Some(128))
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
    assert_eq!((c.threads, c.max_batch, c.max_wait_ms), (5, Some(11), 9));
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
    assert_eq!((c.threads, c.max_batch), (1, Some(2)));
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
    assert_eq!(e, "UQ_NLI_SESSIONS=0 is out of range: use 1 to 64");
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
    assert_eq!(e, "--max-batch 0 is out of range: use at least 1");
    std::fs::write(&f, r#"{"max_wait_ms": 60001}"#).unwrap();
    env.insert("UQ_CONFIG", f.display().to_string());
    let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
    assert_eq!(
        e,
        "config file max_wait_ms 60001 is out of range: use at most 60000"
    );
    env.clear();
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
    assert!(bad(CliOverrides::default(), &env).starts_with("UQ_NLI_BACKEND: no URL: give"));
    env.insert("UQ_NLI_BACKEND", "http://x:1".into());
    env.insert("UQ_NLI_BACKEND_TIMEOUT_MS", "5".into());
    assert_eq!(
        bad(CliOverrides::default(), &env),
        "UQ_NLI_BACKEND_TIMEOUT_MS=5 is out of range: use 100 to 3600000"
    );
    env.remove("UQ_NLI_BACKEND_TIMEOUT_MS");
    env.insert("UQ_NLI_BACKEND_MODEL", "a/b".into());
    let e = bad(CliOverrides::default(), &env);
    assert!(
        e.starts_with("UQ_NLI_BACKEND_MODEL: \"a/b\" is not a model name"),
        "{e}"
    );
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

/// The config file's error lists every key, a group's inside braces.
#[test]
fn valid_keys_text() {
    let keys = settings::valid_keys();
    assert!(
        keys.starts_with("socket, nli_model, embed_model, ort_lib, device, precision,"),
        "{keys}"
    );
    assert!(
        keys.ends_with(", nli_backend {urls, model, timeout_ms, retries, health_ms}"),
        "{keys}"
    );
    for s in settings::SETTINGS {
        let key = s.key.rsplit('.').next().unwrap_or_default();
        assert!(keys.contains(key), "{key} missing from {keys}");
    }
}

/// A setting given at its default value is still given: `--max-batch 16` stays 16 where the
/// device's default is another (CUDA's 128), and only an unset batch takes the device's.
#[test]
fn a_given_default_is_kept_under_cuda_defaults() {
    use crate::engine::defaults::{DeviceDefaults, CUDA};
    let exe = tmpdir("given16");
    let env = HashMap::new();
    let given = CliOverrides {
        max_batch: Some(16),
        device: Some("cuda".into()),
        ..Default::default()
    };
    let c = resolve(given, &env, &exe).unwrap();
    assert_eq!(c.max_batch, Some(16));
    let cuda = DeviceDefaults::of(Device::Cuda);
    assert_eq!(cuda.max_batch, 128, "CUDA's default is not 16");
    assert_eq!(crate::engine::nli_batch(&c, &cuda), 16);
    let unset = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(crate::engine::nli_batch(&unset, &CUDA), 128);
    assert_eq!(
        crate::engine::nli_batch(&unset, &DeviceDefaults::of(Device::Cpu)),
        16
    );
    // So is a default value given by the variable or the config file.
    let env: HashMap<&str, String> = [("UQ_MAX_BATCH", "16".to_string())].into();
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(crate::engine::nli_batch(&c, &CUDA), 16);
}

/// `Config::to_env` gives a child daemon the same configuration: every setting decided here
/// (the backend's too) resolves there to the same value, and unset ones stay unset.
#[test]
fn config_written_as_variables_resolves_to_itself() {
    let exe = tmpdir("to-env");
    let cli = CliOverrides {
        nli_model: Some("/m/nli".into()),
        device: Some("cpu".into()),
        precision: Some("int8".into()),
        threads: Some(3),
        nli_sessions: Some(16),
        nli_overlap: Some(2),
        nli_stand_in_ms: Some("27.5".into()),
        max_batch: Some(16),
        max_wait_ms: Some(7),
        busy_timeout_ms: Some(1000),
        nli_backend: Some("http://a:1,http://b:2/v2".into()),
        nli_backend_retries: Some(0),
        ..Default::default()
    };
    let c = resolve(cli, &HashMap::new(), &exe).unwrap();
    let vars = c.to_env();
    for s in settings::SETTINGS {
        if !["UQ_EMBED_MODEL", "UQ_NLI_MAX_TOKENS"].contains(&s.env) {
            assert!(
                vars.iter().any(|(k, _)| *k == s.env),
                "{} not written",
                s.env
            );
        }
    }
    let env: HashMap<&str, String> = vars.into_iter().collect();
    let again = resolve_with(
        CliOverrides::default(),
        &|k| env.get(k).cloned(),
        Path::new("/elsewhere"),
        Path::new("/other/cwd"),
    )
    .unwrap();
    assert_eq!(again, c);
    assert_eq!(
        again.nli_backend.unwrap().urls,
        ["http://a:1", "http://b:2"]
    );
}

/// Every setting's literal default lies in its range, and its docs row says it.
#[test]
fn value_defaults_in_range() {
    let exe = tmpdir("ranges");
    let c = resolve(CliOverrides::default(), &HashMap::new(), &exe).unwrap();
    let vars: HashMap<&str, String> = c.to_env().into_iter().collect();
    for s in settings::SETTINGS {
        if let values::DocDefault::Value(v) = s.default {
            if let Ok(n) = v.parse::<u64>() {
                assert!(s.min.is_none_or(|lo| n >= lo) && s.max.is_none_or(|hi| n <= hi));
                assert!(s.default_doc().starts_with(v), "{}", s.default_doc());
                if !s.key.contains('.') {
                    assert_eq!(vars[s.env], v, "{}", s.env);
                }
            }
        }
    }
}

/// docs/reference.md's settings table is `reference::markdown_table()`; with `UQ_BLESS=1` the
/// test writes it there instead of failing.
#[test]
fn settings_table_matches_docs_reference() {
    use reference::{DOCS_BEGIN, DOCS_END};
    let path = uq_core::generated_docs::reference_md(env!("CARGO_MANIFEST_DIR"));
    let stale = format!(
        "the settings table in {} is not the settings'; run UQ_BLESS=1 cargo test -p uq-daemon \
         settings_table to regenerate it",
        path.display()
    );
    let want = reference::markdown_table();
    uq_core::generated_docs::check_section(&path, DOCS_BEGIN, DOCS_END, &want, &stale);
}

/// The variables the daemon may read outside `settings!`: the extension's own and the docs'
/// regeneration switch.
const NOT_SETTINGS: &[&str] = &["UQ_DAEMON", "UQ_SOCKET", "UQ_BLESS"];

/// The reads of `UQ_*` variables in `text` outside comments: a call with one string argument
/// naming one (`env::var("UQ_X")`, `var_os("UQ_X")`, `env("UQ_X")`), as `(line, name)`.
pub(crate) fn variable_reads(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(i) = rest.find("\"UQ_") {
            let before = rest[..i].trim_end();
            let after = &rest[i + 1..];
            let end = after.find('"').unwrap_or(after.len());
            let name = &after[..end];
            let call = before.ends_with('(')
                && before[..before.len() - 1]
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
            let closed = after[end..]
                .get(1..)
                .is_some_and(|t| t.trim_start().starts_with(')'));
            if call && closed && !NOT_SETTINGS.contains(&name) {
                out.push((n + 1, name.to_string()));
            }
            rest = &after[end..];
        }
    }
    out
}

/// Every `UQ_*` variable the daemon reads goes through `settings!` (config/settings.rs): no
/// file of daemon/src reads one beside it (test files left out: their knobs are not the
/// daemon's).
#[test]
fn no_variable_is_read_beside_the_settings() {
    assert_eq!(
        variable_reads(r#"let a = std::env::var("UQ_X"); env.var_os( "UQ_Y" ); f("UQ_Z", 1);"#),
        [(1, "UQ_X".to_string()), (1, "UQ_Y".to_string())]
    );
    assert!(variable_reads(r#"// std::env::var("UQ_X")  "#).is_empty());
    assert!(variable_reads(r#"std::env::var("UQ_BLESS")"#).is_empty());
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stray = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(&src).unwrap().display().to_string();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && rel != "config/settings.rs"
                && !rel.ends_with("tests.rs")
            {
                let text = std::fs::read_to_string(&p).unwrap();
                for (line, name) in variable_reads(&text) {
                    stray.push(format!("daemon/src/{rel}:{line} reads {name}"));
                }
            }
        }
    }
    assert!(
        stray.is_empty(),
        "declare these in config/settings.rs (settings! or @vars) and read them there:\n{}",
        stray.join("\n")
    );
}

/// A `--help` text that names its setting's default names the entry's (the two cannot drift).
#[test]
fn help_texts_name_the_entries_defaults() {
    use clap::Args;
    let cmd = CliOverrides::augment_args(clap::Command::new("serve"));
    for s in settings::SETTINGS {
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == s.field)
            .unwrap_or_else(|| panic!("no flag {}", s.flag()));
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        assert!(help.contains(s.env), "{}: {help}", s.flag());
        if let (values::DocDefault::Value(v), Some(i)) = (&s.default, help.find("(default ")) {
            let said = help[i + "(default ".len()..]
                .split([')', ';'])
                .next()
                .unwrap_or_default();
            assert_eq!(said, v.trim_matches('"'), "{}: {help}", s.flag());
        }
    }
}

/// The stand-in's time per batch: milliseconds, fractions too; a bad one names the variable and
/// what to give.
#[test]
fn stand_in_ms_is_a_time_per_batch() {
    let exe = tmpdir("stand-in");
    let env: HashMap<&str, String> = [("UQ_NLI_STAND_IN_MS", "27.5".to_string())].into();
    let c = resolve(CliOverrides::default(), &env, &exe).unwrap();
    assert_eq!(c.nli_stand_in_ms, Some(StandInMs(27.5)));
    assert_eq!(
        c.nli_stand_in_ms.unwrap().per_batch(),
        std::time::Duration::from_micros(27_500)
    );
    assert_eq!(c.nli_overlap, None, "the device's overlap");
    let unset = resolve(CliOverrides::default(), &HashMap::new(), &exe).unwrap();
    assert_eq!(unset.nli_stand_in_ms, None);
    for bad in ["-1", "fast", "1e9"] {
        let env: HashMap<&str, String> = [("UQ_NLI_STAND_IN_MS", bad.to_string())].into();
        let e = resolve(CliOverrides::default(), &env, &exe).unwrap_err();
        assert!(
            e.contains("UQ_NLI_STAND_IN_MS") && e.contains("milliseconds per batch"),
            "{e}"
        );
    }
}
