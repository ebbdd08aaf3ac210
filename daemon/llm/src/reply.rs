//! Parsing of a chat-completions reply body, tolerant of what proxies and servers really send.

use serde_json::Value;

use crate::client::Usage;
use crate::error::snippet;
use crate::logprobs::{Alternative, TokenLogprob};

/// A usable reply: one text per choice, in `index` order.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedReply {
    pub texts: Vec<String>,
    pub logprobs: Option<Vec<Vec<TokenLogprob>>>,
    pub usage: Usage,
    pub model: Option<String>,
}

/// Why a reply cannot be used; `retryable` when another attempt may fix it (broken JSON from a
/// proxy, empty `choices`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyProblem {
    pub retryable: bool,
    pub refusal: bool,
    pub message: String,
}

impl ReplyProblem {
    fn retry(message: String) -> Self {
        ReplyProblem {
            retryable: true,
            refusal: false,
            message,
        }
    }
    fn fatal(message: String) -> Self {
        ReplyProblem {
            retryable: false,
            refusal: false,
            message,
        }
    }
    fn refusal(message: String) -> Self {
        ReplyProblem {
            retryable: false,
            refusal: true,
            message,
        }
    }
}

/// Parses a 2xx body. `want_logprobs`: logprobs were requested, so each choice must carry them.
pub fn parse_reply(body: &str, want_logprobs: bool) -> Result<ParsedReply, ReplyProblem> {
    let v: Value = serde_json::from_str(body).map_err(|e| {
        ReplyProblem::retry(format!(
            "the reply is not valid JSON ({e}; truncated by a proxy?): {}",
            snippet(body, 200)
        ))
    })?;
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        return Err(ReplyProblem::retry(format!(
            "the server sent an error object: {}",
            snippet(&msg, 300)
        )));
    }
    let indexed = choices_by_index(&v, body)?;
    let mut texts = Vec::with_capacity(indexed.len());
    let mut logprobs = Vec::with_capacity(indexed.len());
    for (idx, choice) in indexed {
        texts.push(choice_text(idx, choice)?);
        if want_logprobs {
            logprobs.push(choice_logprobs(idx, choice)?);
        }
    }
    let usage = v.get("usage").map(parse_usage).unwrap_or_default();
    let model = v.get("model").and_then(Value::as_str).map(str::to_string);
    Ok(ParsedReply {
        texts,
        logprobs: want_logprobs.then_some(logprobs),
        usage,
        model,
    })
}

/// The reply's `choices`, sorted by their `index` (their position when they have none).
fn choices_by_index<'v>(v: &'v Value, body: &str) -> Result<Vec<(u64, &'v Value)>, ReplyProblem> {
    let choices = match v.get("choices").and_then(Value::as_array) {
        Some(c) if !c.is_empty() => c,
        Some(_) => {
            return Err(ReplyProblem::retry(
                "the reply has an empty `choices` list".into(),
            ))
        }
        None => {
            return Err(ReplyProblem::retry(format!(
            "the reply has no `choices` list (is base_url an OpenAI-compatible /v1 endpoint?): {}",
            snippet(body, 200)
        )))
        }
    };
    let mut indexed: Vec<(u64, &Value)> = choices
        .iter()
        .enumerate()
        .map(|(pos, c)| {
            (
                c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64),
                c,
            )
        })
        .collect();
    indexed.sort_by_key(|(i, _)| *i);
    Ok(indexed)
}

/// Choice `idx`'s text; a refusal, a filtered or an empty choice is an error.
fn choice_text(idx: u64, choice: &Value) -> Result<String, ReplyProblem> {
    let message = choice.get("message").unwrap_or(&Value::Null);
    let finish = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Some(r) = message
        .get("refusal")
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
    {
        return Err(ReplyProblem::refusal(format!(
            "the model refused (choice {idx}): {}",
            snippet(r, 300)
        )));
    }
    match content_text(message.get("content")) {
        Some(text) => Ok(text),
        None if finish == "content_filter" => Err(ReplyProblem::refusal(format!(
            "the server's content filter blocked choice {idx} (finish_reason=content_filter)"
        ))),
        None => Err(ReplyProblem::fatal(format!(
            "choice {idx} has no text (content is null or missing, finish_reason={}); the model \
             returned nothing usable: check that the model supports plain chat completions",
            if finish.is_empty() { "none" } else { finish }
        ))),
    }
}

/// Choice `idx`'s token logprobs, which were requested: missing ones are an error.
/// Each log-probability must be a number <= 0 (`uq_core::logprobs::check`): a server that
/// sends a positive one (or a probability in their place) is not read as a valid answer.
fn choice_logprobs(idx: u64, choice: &Value) -> Result<Vec<TokenLogprob>, ReplyProblem> {
    let mut tokens = token_logprobs(choice.get("logprobs")).ok_or_else(|| {
        ReplyProblem::fatal(format!(
            "logprobs were requested but choice {idx} carries none (or a token without a \
             numeric logprob): the server does not support them; set logprobs=false"
        ))
    })?;
    uq_core::logprobs::check(&mut tokens, &format!("choice {idx}'s logprobs.content")).map_err(
        |e| {
            ReplyProblem::fatal(format!(
                "the server's {e}; it does not send log-probabilities uqlite can use: set \
                 logprobs=false in the LLM's config"
            ))
        },
    )?;
    Ok(tokens)
}

/// `content` as text: a string, or an array of `{type:"text", text}` parts joined.
fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let mut out = String::new();
            let mut any = false;
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str).or_else(|| p.as_str()) {
                    out.push_str(t);
                    any = true;
                }
            }
            any.then_some(out)
        }
        _ => None,
    }
}

/// `logprobs.content[]` (current API: `token`, `logprob`, `top_logprobs[]`) or
/// `logprobs.token_logprobs` with `tokens` and `top_logprobs` (legacy completions: one
/// `{token: logprob}` object per position). A token without a numeric `logprob` fails the whole
/// list (`None`); missing texts or alternatives stay empty.
fn token_logprobs(lp: Option<&Value>) -> Option<Vec<TokenLogprob>> {
    let lp = lp?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    if let Some(items) = lp.get("content").and_then(Value::as_array) {
        return items
            .iter()
            .map(|t| {
                let top = t
                    .get("top_logprobs")
                    .and_then(Value::as_array)
                    .map(|alts| {
                        alts.iter()
                            .filter_map(|a| {
                                Some(Alternative {
                                    token: text(a.get("token")),
                                    logprob: a.get("logprob")?.as_f64()?,
                                })
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Some(TokenLogprob {
                    token: text(t.get("token")),
                    offset: None,
                    logprob: t.get("logprob").and_then(Value::as_f64)?,
                    top,
                })
            })
            .collect();
    }
    if let Some(items) = lp.get("token_logprobs").and_then(Value::as_array) {
        let tokens = lp.get("tokens").and_then(Value::as_array);
        let tops = lp.get("top_logprobs").and_then(Value::as_array);
        return items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut top: Vec<Alternative> = tops
                    .and_then(|t| t.get(i))
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .filter_map(|(k, v)| {
                                Some(Alternative {
                                    token: k.clone(),
                                    logprob: v.as_f64()?,
                                })
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                top.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
                Some(TokenLogprob {
                    token: text(tokens.and_then(|t| t.get(i))),
                    offset: None,
                    logprob: v.as_f64()?,
                    top,
                })
            })
            .collect();
    }
    None
}

fn parse_usage(u: &Value) -> Usage {
    let get = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        prompt_tokens: get("prompt_tokens"),
        completion_tokens: get("completion_tokens"),
        requests: 0,
        cache_hits: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_reply() {
        let body = r#"{"id":"x","model":"m-1","choices":[
            {"index":1,"message":{"role":"assistant","content":"b"},"finish_reason":"stop"},
            {"index":0,"message":{"role":"assistant","content":"a","refusal":null},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}"#;
        let r = parse_reply(body, false).unwrap();
        assert_eq!(r.texts, vec!["a", "b"]);
        assert_eq!(r.usage.prompt_tokens, 7);
        assert_eq!(r.usage.completion_tokens, 3);
        assert_eq!(r.model.as_deref(), Some("m-1"));
        assert!(r.logprobs.is_none());
    }

    #[test]
    fn logprobs_and_parts() {
        let body = r#"{"choices":[{"message":{"content":[{"type":"text","text":"Hi"},{"type":"text","text":"!"}]},
            "logprobs":{"content":[{"token":"Hi","logprob":-0.1},{"token":"!","logprob":-2.0}]}}]}"#;
        let r = parse_reply(body, true).unwrap();
        assert_eq!(r.texts, vec!["Hi!"]);
        let lp = &r.logprobs.as_ref().unwrap()[0];
        assert_eq!(crate::logprobs::values(lp), vec![-0.1, -2.0]);
        assert_eq!((lp[0].token.as_str(), lp[1].token.as_str()), ("Hi", "!"));
        // A positive log-probability is not read as a valid answer.
        let positive = parse_reply(
            r#"{"choices":[{"message":{"content":"x"},"logprobs":{"content":[{"token":"x","logprob":0.5}]}}]}"#,
            true,
        )
        .unwrap_err();
        assert!(
            !positive.retryable && positive.message.contains("must be <= 0"),
            "{}",
            positive.message
        );
        assert_eq!(r.usage.requests, 0);
        let missing =
            parse_reply(r#"{"choices":[{"message":{"content":"x"}}]}"#, true).unwrap_err();
        assert!(!missing.retryable && missing.message.contains("logprobs=false"));
    }

    #[test]
    fn broken_replies() {
        let t = parse_reply(r#"{"choices":[{"message":{"content":"tru"#, false).unwrap_err();
        assert!(t.retryable && t.message.contains("not valid JSON"));
        let e = parse_reply(r#"{"choices":[]}"#, false).unwrap_err();
        assert!(e.retryable && e.message.contains("empty `choices`"));
        let m = parse_reply(r#"{"object":"list"}"#, false).unwrap_err();
        assert!(m.retryable && m.message.contains("no `choices`"));
        let n = parse_reply(
            r#"{"choices":[{"message":{"content":null},"finish_reason":"length"}]}"#,
            false,
        )
        .unwrap_err();
        assert!(
            !n.retryable && n.message.contains("content is null") && n.message.contains("length")
        );
        let r = parse_reply(
            r#"{"choices":[{"message":{"content":null,"refusal":"I can't help with that."}}]}"#,
            false,
        )
        .unwrap_err();
        assert!(r.refusal && !r.retryable && r.message.contains("I can't help"));
        let f = parse_reply(
            r#"{"choices":[{"message":{"content":null},"finish_reason":"content_filter"}]}"#,
            false,
        )
        .unwrap_err();
        assert!(f.refusal);
        let o = parse_reply(r#"{"error":{"message":"overloaded"}}"#, false).unwrap_err();
        assert!(o.retryable && o.message.contains("overloaded"));
        let s = parse_reply("", false).unwrap_err();
        assert!(s.retryable);
    }
}
