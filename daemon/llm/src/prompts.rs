//! Prompt templates, verbatim.
//!
//! The paper's templates are copied byte for byte from its prompts appendix (line breaks, the
//! four-space indent of the decomposition listing and the trailing spaces it prints included).
//! The paper prints no reconstruction (UAD) prompt and no unit-QA answer prompt; those are uqlm
//! 0.6.7's (`uqlm/utils/prompts/reconstruction.py`, `uqlm/utils/prompts/claim_qa.py`), cited on
//! each constant. Builders substitute the `{name}` placeholders in a single pass, so text inserted
//! for one placeholder is never scanned again (a response containing `{claim}` stays as it is).
//! The builders are here; the template constants are in `prompts/templates.rs`, re-exported.

mod templates;

pub use templates::*;

/// Replaces each `{name}` of `template` whose name is in `values`; everything else is copied.
/// One pass: inserted values are not re-scanned.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let extra: usize = values.iter().map(|(_, v)| v.len()).sum();
    let mut out = String::with_capacity(template.len() + extra);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = values
            .iter()
            .find(|(name, _)| after.starts_with(name) && after[name.len()..].starts_with('}'));
        match hit {
            Some((name, value)) => {
                out.push_str(value);
                rest = &after[name.len() + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// FactScore grading user prompt: is `claim` supported by `answer` (the reference text)?
/// Send with [`FACTSCORE_SYSTEM`] as the system prompt; parse with [`crate::parse::yes_no`].
pub fn factscore_user(claim: &str, answer: &str) -> String {
    fill(FACTSCORE_USER, &[("answer", answer), ("claim", claim)])
}

/// Objectivity user prompt for `claim`. Send with [`OBJECTIVITY_SYSTEM`]; parse with
/// [`crate::parse::objectivity`].
pub fn objectivity_user(claim: &str) -> String {
    fill(OBJECTIVITY_USER, &[("claim", claim)])
}

/// NLI-judge prompt (uqlite's own wording; docs/reference.md "NLI judge" cites SelfCheckGPT's
/// and uqlm's): does `premise` entail `hypothesis`? `ternary`: answer entailment / neutral /
/// contradiction ([`NLI_TERNARY`]), else yes / no ([`NLI_BINARY`]). Send with [`NLI_SYSTEM`];
/// parse with [`crate::parse::nli_label`].
pub fn nli_judge(premise: &str, hypothesis: &str, ternary: bool) -> String {
    fill(
        if ternary { NLI_TERNARY } else { NLI_BINARY },
        &[("premise", premise), ("hypothesis", hypothesis)],
    )
}

/// The NLI judge's raw completion prompt for the local model (no chat template, few-shot,
/// ending in "Answer:" so that the reply's first token is the label; send with
/// [`crate::ChatRequest::raw`] and stop at a newline). A 135M chat model answers the chat
/// prompts of [`nli_judge`] with a sentence ("The statement is not necessarily true, as"), which
/// has no label; this form always gets one.
pub fn nli_judge_local(premise: &str, hypothesis: &str, ternary: bool) -> String {
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    fill(
        if ternary {
            NLI_LOCAL_TERNARY
        } else {
            NLI_LOCAL_BINARY
        },
        &[
            ("premise", &one_line(premise)),
            ("hypothesis", &one_line(hypothesis)),
        ],
    )
}

/// Claim decomposition prompt for `response`; parse with [`crate::parse::claims`].
pub fn claim_decomposition(response: &str) -> String {
    fill(CLAIM_DECOMPOSITION, &[("response", response)])
}

/// Claim decomposition as raw few-shot completion, for the local model, which cannot follow
/// [`CLAIM_DECOMPOSITION`]'s instructions (a 135M model echoes the passage or answers
/// `### NONE`): the paper's examples 1 and 2, read out of that listing (indent and trailing
/// spaces dropped) as `Passage:` / `### fact` blocks, then `response` on one line and an open
/// `###`. Send with [`crate::ChatRequest::raw`], stop at the next blank line, and prefix the
/// completion with `###` before [`crate::parse::claims`].
pub fn claim_decomposition_few_shot(response: &str) -> String {
    let mut out =
        String::from("Split each passage into atomic facts, one per line starting with ###.\n\n");
    let mut in_example = false;
    for line in CLAIM_DECOMPOSITION.lines().map(str::trim) {
        if line == "Example 1:" || line == "Example 2:" {
            in_example = true;
            out.push_str("Passage: ");
        } else if in_example && line.is_empty() {
            in_example = false;
            out.push('\n');
        } else if in_example {
            out.push_str(line);
            out.push('\n');
        }
    }
    let one_line = response.split_whitespace().collect::<Vec<_>>().join(" ");
    out.push_str(&format!("Passage: {one_line}\n###"));
    out
}

/// Verbalized confidence prompt for `claim` of an answer to `original_question`; parse with
/// [`crate::parse::verbalized_confidence`].
pub fn verbalized_confidence(original_question: &str, claim: &str) -> String {
    fill(
        VERBALIZED_CONFIDENCE,
        &[("original_question", original_question), ("claim", claim)],
    )
}

/// uqlm 0.6.7's P(true) prompt (`uqlm/white_box/p_true.py`, `_construct_ptrue_prompt`): the
/// question, the distinct answers among the samples and the answer (in first-seen order, where
/// uqlm lists a Python set), and the proposed answer; sent with [`P_TRUE_SYSTEM`].
pub fn p_true(question: &str, answer: &str, samples: &[String]) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for s in samples
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(answer))
    {
        if !distinct.contains(&s) {
            distinct.push(s);
        }
    }
    let mut possible = String::new();
    if distinct.len() > 1 {
        possible.push_str("\n\nHere are some possible answers:\n");
        for a in distinct {
            possible.push_str(a);
            possible.push('\n');
        }
    }
    format!(
        "\n    Question: {question}\n    {possible}\n    Proposed Answer: {answer}\n\n    Is the proposed \
         answer to the question true or false? Answer with only one word true/false.\n\n    True or \
         False:\n        "
    )
}

/// uqlm 0.6.7's P(true) system prompt (`PTRUE_SYSTEM_PROMPT`).
pub const P_TRUE_SYSTEM: &str = r####"
Your task is to determine whether a given answer to a question is correct.

Guidelines for your evaluation:
- Do NOT penalize phrasing differences
- Respond with EXACTLY one word: "True" or "False"
- Answer "True" if the response is correct
- Answer "False" if the response is incorrect
- Do not explain your reasoning or provide any additional commentary
"####;

/// Unit-QA question creation prompt: `num_questions` questions whose answer is `factoid`, in the
/// context of `response`; parse with [`crate::parse::questions`].
pub fn unit_qa_questions(response: &str, factoid: &str, num_questions: usize) -> String {
    let n = num_questions.to_string();
    fill(
        UNIT_QA_QUESTIONS,
        &[
            ("response", response),
            ("factoid", factoid),
            ("num_questions", &n),
        ],
    )
}

/// uqlm's one-question prompt for `claim` (what uqlm sends when `num_questions == 1`); the reply
/// is the question itself.
pub fn unit_qa_single_question(claim: &str) -> String {
    fill(UNIT_QA_SINGLE_QUESTION, &[("claim", claim)])
}

/// uqlm's prompt asking the model to answer a generated `claim_question`, optionally prefixed by
/// the original question and given the response written so far (uqlm's `get_answer_template`).
pub fn unit_qa_answer(
    claim_question: &str,
    original_question: Option<&str>,
    original_response: Option<&str>,
) -> String {
    let mut out = match original_question {
        Some(q) => fill(UNIT_QA_ANSWER_PREFIX, &[("original_question", q)]),
        None => String::new(),
    };
    match original_response {
        Some(r) => out.push_str(&fill(
            UNIT_QA_ANSWER_WITH_RESPONSE,
            &[("original_response", r), ("claim_question", claim_question)],
        )),
        None => out.push_str(&fill(UNIT_QA_ANSWER, &[("claim_question", claim_question)])),
    }
    out
}

/// Claim merging prompt: which of `sampled_claims` are not covered by `master_claims`? Each list
/// is joined with `\n` (as uqlm's `get_claim_dedup_prompt`); parse with [`crate::parse::merged_claims`].
pub fn claim_merging<A: AsRef<str>, B: AsRef<str>>(
    master_claims: &[A],
    sampled_claims: &[B],
) -> String {
    let master = join_lines(master_claims);
    let sampled = join_lines(sampled_claims);
    fill(
        CLAIM_MERGING,
        &[
            ("master_claim_str", &master),
            ("sampled_claim_str", &sampled),
        ],
    )
}

/// UAD reconstruction prompt: synthesise the kept `claims` into a paragraph (uqlm's
/// `get_response_reconstruction_prompt`); the reply is the refined response.
pub fn response_reconstruction<S: AsRef<str>>(claims: &[S]) -> String {
    let facts = join_lines(claims);
    fill(RESPONSE_RECONSTRUCTION, &[("facts", &facts)])
}

fn join_lines<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|s| s.as_ref())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_nli_judge_prompts_end_in_answer() {
        let b = nli_judge_local("A  b.\nC d.", "E f.", false);
        assert!(
            b.ends_with("Context: A b. C d.\nStatement: E f.\nAnswer:"),
            "{b}"
        );
        assert!(b.contains("Answer yes or no."));
        let t = nli_judge_local("A b.", "E f.", true);
        assert!(t.contains("Answer: neutral") && t.ends_with("Statement: E f.\nAnswer:"));
    }

    #[test]
    fn fill_is_single_pass_and_keeps_unknown_braces() {
        let t = "a {x} b {y} {unknown} {x";
        let out = fill(t, &[("x", "{y}"), ("y", "Y")]);
        assert_eq!(out, "a {y} b Y {unknown} {x");
    }

    #[test]
    fn factscore_prompts() {
        let out = factscore_user("Paris is in France.", "Paris is the capital of France.");
        assert_eq!(
            out,
            "Context: Paris is the capital of France.\nClaim: Paris is in France.\nIs the claim supported by the context above?\nAnswer only Yes or No:"
        );
        assert!(
            FACTSCORE_SYSTEM.starts_with("You are a precise and objective fact-checking assistant")
        );
        assert!(FACTSCORE_SYSTEM
            .contains("3. Respond with \"No\" if:\n   - The claim contradicts the context\n"));
        assert!(FACTSCORE_SYSTEM.ends_with(
            "as these will be processed automatically in the FactScore evaluation framework."
        ));
    }

    #[test]
    fn objectivity_prompts() {
        let out = objectivity_user("The Eiffel Tower is beautiful.");
        assert_eq!(
            out,
            "Input: The Eiffel Tower is beautiful.\nIs the input subjective or objective?\nAnswer only subjective or objective:"
        );
        assert!(OBJECTIVITY_SYSTEM.contains("- Does it include evaluative terms like \"good,\" \"beautiful,\" \"better,\" \"worst,\" \"important,\" or \"significant\"?\n"));
        assert!(OBJECTIVITY_SYSTEM.ends_with(
            "Respond only with \"objective\" or \"subjective\" based on your analysis."
        ));
    }

    #[test]
    fn decomposition_prompt_is_verbatim() {
        let out = claim_decomposition("Marie Curie won two Nobel Prizes.");
        assert!(out.starts_with("    Please breakdown the following passage into independent fact pieces. \n\n    Step 1:"));
        assert!(out.contains("Do not include other formatting. \n\n    Step 3:"));
        assert!(out.contains("    Example 4:\n    Hi\n    ### NONE\n\n"));
        assert!(out.contains(
            "developed and published by Riot Games. \n    ### League of Legends is a video game.\n"
        ));
        assert!(out.contains("    Now it's your turn. Here is the passage: \n\n    Marie Curie won two Nobel Prizes.\n\n    You should only return the final answer. Now your answer is:"));
        assert!(out.ends_with("Now your answer is:"));
        assert!(!out.contains("{response}"));
        assert_eq!(CLAIM_DECOMPOSITION.lines().count(), 49);
        assert!(CLAIM_DECOMPOSITION
            .lines()
            .all(|l| l.is_empty() || l.starts_with("    ")));
    }

    #[test]
    fn few_shot_decomposition_prompt_is_pinned() {
        let out = claim_decomposition_few_shot("  Marie Curie won\ntwo Nobel Prizes. ");
        assert_eq!(
            out,
            "Split each passage into atomic facts, one per line starting with ###.

Passage: Michael Collins (born October 31, 1930) is a retired American astronaut and test pilot who was the Command Module Pilot for the Apollo 11 mission in 1969.
### Michael Collins was born on October 31, 1930.
### Michael Collins is retired.
### Michael Collins is an American.
### Michael Collins was an astronaut.
### Michael Collins was a test pilot.
### Michael Collins was the Command Module Pilot.
### Michael Collins was the Command Module Pilot for the Apollo 11 mission.
### Michael Collins was the Command Module Pilot for the Apollo 11 mission in 1969.

Passage: League of Legends (often abbreviated as LoL) is a multiplayer online battle arena (MOBA) video game developed and published by Riot Games.
### League of Legends is a video game.
### League of Legends is often abbreviated as LoL.
### League of Legends is a multiplayer online battle arena.
### League of Legends is a MOBA video game.
### League of Legends is developed by Riot Games.
### League of Legends is published by Riot Games.

Passage: Marie Curie won two Nobel Prizes.
###"
        );
    }

    #[test]
    fn verbalized_confidence_prompt() {
        let out =
            verbalized_confidence("Who was Ada Lovelace?", "Ada Lovelace was a mathematician.");
        assert!(out.starts_with("We are writing an answer to this question: Who was Ada Lovelace?\n\nDescribe how likely it is that the specific claim below is correct as one of the following expressions: \n\nNo chance (0%)\n"));
        assert!(out.contains("Very good chance (80%)\nAlmost certain (100%)\n\n"));
        assert!(out.ends_with(
            "Here is the claim: Ada Lovelace was a mathematician.\n\nNow your answer is: "
        ));
    }

    #[test]
    fn unit_qa_prompts() {
        let out = unit_qa_questions(
            "Ada Lovelace was born in 1815.",
            "Ada Lovelace was born in 1815.",
            3,
        );
        assert!(out.starts_with("Following this text: Ada Lovelace was born in 1815.\nYou see the sentence: Ada Lovelace was born in 1815.\nGenerate a list of 3 questions, that might"));
        assert!(out.contains("Output each question in one single line starting with ###. Do not include other formatting.\n\nExample:\n### Here is the first question? ### Here is the second question?\n\nNow your response is:"));
        assert!(out.ends_with("Now your response is:"));
        let one = unit_qa_single_question("Paris");
        assert!(one.contains(
            "Create a specific question that has this exact claim as its only correct answer."
        ));
        assert!(one.contains("    Claim: Paris\n"));
        let ans = unit_qa_answer(
            "What is the capital of France?",
            Some("Tell me about France"),
            None,
        );
        assert!(ans.starts_with("We are working on an answer to this question: \"Tell me about France.\"\n\n**Your task**"));
        assert!(ans.ends_with("What is the capital of France?\n\nNow your answer is:"));
        let with = unit_qa_answer("Q?", None, Some("So far."));
        assert!(with.contains("So far we have written:\n    So far.\n    The next sentence should be the answer to the following question: Q?\n"));
    }

    #[test]
    fn claim_merging_prompt() {
        let out = claim_merging(&["A is B.", "C is D."], &["E is F."]);
        assert!(out.starts_with(
            "Given two lists titled \"Original Claim List\" and \"New Claim List\", your task is"
        ));
        assert!(out.contains("**Original Claim List:**\nA is B.\nC is D.\n**New Claim List:**\nE is F.\nBegin with the Verification Process"));
        assert!(out.contains("starting each line with a dash ('-')."));
        assert!(out.ends_with("any new insights that the \"New Claim List\" provides."));
    }

    #[test]
    fn reconstruction_prompt_matches_uqlm() {
        let out = response_reconstruction(&["Paris is a city.", "Paris is in France."]);
        assert!(out.starts_with("\n    Task: You are provided with a list of facts about prompt. Your\n    goal is to synthesize"));
        assert!(out.contains("number of provided facts\u{2014}shorter for\n"));
        assert!(out.ends_with("    The facts:\n    Paris is a city.\nParis is in France.\n    "));
    }
}
