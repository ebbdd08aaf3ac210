//! One generated token with its log-probability and the top-k alternatives the server (or the
//! local model) reported for its position, in the OpenAI shape
//! (`{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}`), as a completion carries it,
//! the completion cache stores it and `uq_generate` returns it.

use serde::{Deserialize, Deserializer, Serialize};

/// A generated token. `token` is its text as the server sent it (empty when unknown: a legacy
/// reply or a cache entry written before the token text was kept).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenLogprob {
    pub token: String,
    /// Where the token starts in the answer, in characters from 0 ([`place`]; `None` when the
    /// tokens do not tile the answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    pub logprob: f64,
    /// The most likely tokens at this position, most likely first (the chosen one among them
    /// when it is in the top k); empty when alternatives were not asked for.
    #[serde(rename = "top_logprobs", skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<Alternative>,
}

/// One of the top-k tokens at a position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alternative {
    pub token: String,
    pub logprob: f64,
}

impl TokenLogprob {
    /// A token known only by its log-probability.
    pub fn bare(logprob: f64) -> Self {
        TokenLogprob {
            token: String::new(),
            offset: None,
            logprob,
            top: Vec::new(),
        }
    }
}

/// Accepts the object form and, for cache entries written before tokens were kept, a bare
/// number (the log-probability alone).
impl<'de> Deserialize<'de> for TokenLogprob {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Full {
            #[serde(default)]
            token: String,
            #[serde(default)]
            offset: Option<usize>,
            logprob: f64,
            #[serde(default, rename = "top_logprobs")]
            top: Vec<Alternative>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Bare(f64),
            Full(Full),
        }
        Ok(match Either::deserialize(d)? {
            Either::Bare(lp) => TokenLogprob::bare(lp),
            Either::Full(f) => TokenLogprob {
                token: f.token,
                offset: f.offset,
                logprob: f.logprob,
                top: f.top,
            },
        })
    }
}

/// The chosen tokens' log-probabilities.
pub fn values(tokens: &[TokenLogprob]) -> Vec<f64> {
    tokens.iter().map(|t| t.logprob).collect()
}

/// Sets each token's `offset` (characters into `text`) when the tokens' texts, end to end, are
/// exactly `text`; else clears them and says why (the spans of claims cannot be read then).
pub fn place(text: &str, tokens: &mut [TokenLogprob]) -> Result<(), String> {
    for t in tokens.iter_mut() {
        t.offset = None;
    }
    let mut at = 0; // bytes
    let mut chars = 0;
    let mut offsets = Vec::with_capacity(tokens.len());
    for (i, t) in tokens.iter().enumerate() {
        if !text[at..].starts_with(t.token.as_str()) {
            return Err(format!(
                "the tokens do not tile the answer: token {i} ({:?}) is not the text at character {chars}",
                t.token
            ));
        }
        offsets.push(chars);
        at += t.token.len();
        chars += t.token.chars().count();
    }
    if at != text.len() {
        return Err(format!(
            "the tokens do not tile the answer: they end at character {chars} of {}",
            text.chars().count()
        ));
    }
    for (t, o) in tokens.iter_mut().zip(offsets) {
        t.offset = Some(o);
    }
    Ok(())
}

/// Checks a token list given by a user or a server: every log-probability (and every
/// alternative's) a finite number ≤ 0 (a small positive rounding error, up to 1e-6, is read
/// as 0). `what` names the list in the error.
pub fn check(tokens: &mut [TokenLogprob], what: &str) -> Result<(), String> {
    let fix = |x: &mut f64, at: String| -> Result<(), String> {
        if !x.is_finite() && *x != f64::NEG_INFINITY {
            return Err(format!(
                "{what}{at} is {x}: a log-probability must be a number <= 0"
            ));
        }
        if *x > 1e-6 {
            return Err(format!(
                "{what}{at} is {x}: a log-probability must be <= 0 (is it a probability? pass ln p)"
            ));
        }
        *x = x.min(0.0);
        Ok(())
    };
    for (i, t) in tokens.iter_mut().enumerate() {
        fix(&mut t.logprob, format!("[{i}].logprob"))?;
        for (j, a) in t.top.iter_mut().enumerate() {
            fix(&mut a.logprob, format!("[{i}].top_logprobs[{j}].logprob"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_forms_and_writes_the_openai_shape() {
        let v: Vec<TokenLogprob> = serde_json::from_str(
            r#"[-0.5, {"token":"Hi","logprob":-0.1,"top_logprobs":[{"token":"Hi","logprob":-0.1}]}]"#,
        )
        .unwrap();
        assert_eq!(v[0], TokenLogprob::bare(-0.5));
        assert_eq!(v[1].token, "Hi");
        assert_eq!(v[1].top.len(), 1);
        assert_eq!(
            serde_json::to_string(&v[0]).unwrap(),
            r#"{"token":"","logprob":-0.5}"#
        );
        assert_eq!(values(&v), vec![-0.5, -0.1]);
    }

    fn toks(texts: &[&str]) -> Vec<TokenLogprob> {
        texts
            .iter()
            .map(|t| TokenLogprob {
                token: t.to_string(),
                ..TokenLogprob::bare(-0.1)
            })
            .collect()
    }

    #[test]
    fn place_sets_character_offsets_only_when_the_tokens_tile() {
        let mut t = toks(&["Ça", " va", "."]);
        place("Ça va.", &mut t).unwrap();
        assert_eq!(
            t.iter().map(|t| t.offset).collect::<Vec<_>>(),
            vec![Some(0), Some(2), Some(5)]
        );
        let mut t = toks(&["Ça", " va"]);
        assert!(place("Ça va.", &mut t)
            .unwrap_err()
            .contains("end at character 5 of 6"));
        assert!(t.iter().all(|t| t.offset.is_none()));
        let mut t = toks(&["Ça", "va."]);
        assert!(place("Ça va.", &mut t).unwrap_err().contains("token 1"));
    }

    #[test]
    fn check_refuses_positive_and_nan_log_probabilities() {
        let mut t = toks(&["a"]);
        t[0].logprob = 0.5;
        assert!(check(&mut t, "option response_logprobs")
            .unwrap_err()
            .contains("response_logprobs[0].logprob is 0.5"));
        t[0].logprob = f64::NAN;
        assert!(check(&mut t, "x").is_err());
        t[0].logprob = 1e-9;
        check(&mut t, "x").unwrap();
        assert_eq!(t[0].logprob, 0.0);
    }
}
