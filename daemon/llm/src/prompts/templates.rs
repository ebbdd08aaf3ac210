//! The prompt templates, verbatim: generated from the sources named on each; do not edit by
//! hand. The builders of [`crate::prompts`] fill them in.

/// System prompt for FactScore grading (paper appendix, "System prompt for FactScore grading").
pub const FACTSCORE_SYSTEM: &str = r####"You are a precise and objective fact-checking assistant specialized in evaluating factual claims against provided context. Your task is to determine whether claims are supported by the given context, following the FactScore evaluation protocol.

Guidelines for your evaluations:
1. Analyze each claim strictly based on the provided context, not your prior knowledge
2. Respond with "Yes" only if the claim is directly supported by information in the context
3. Respond with "No" if:
   - The claim contradicts the context
   - The claim contains information not present in the context
   - The claim makes assertions that go beyond what the context states

Important principles:
- Be conservative in your judgments - only mark claims as supported when there is clear evidence
- Ignore stylistic differences or paraphrasing if the factual content matches
- Do not make assumptions or inferences beyond what is explicitly stated in the context
- Maintain consistency in your evaluation criteria across all claim-context pairs

Your responses should be limited to "Yes" or "No" without additional explanation, as these will be processed automatically in the FactScore evaluation framework."####;

/// User prompt for FactScore grading (paper appendix). Placeholders: `{answer}`, `{claim}`.
pub const FACTSCORE_USER: &str = r####"Context: {answer}
Claim: {claim}
Is the claim supported by the context above?
Answer only Yes or No:"####;

/// System prompt for objectivity classification (paper appendix).
pub const OBJECTIVITY_SYSTEM: &str = r####"You are an expert linguistic analyst specializing in distinguishing between objective and subjective statements.

Objective statements present verifiable facts, information, or observations that can be proven true or false through evidence. They are independent of personal interpretations or biases. Examples include statistical data, historical events, scientific measurements, or established facts.

Subjective statements express judgments, evaluations, or perspectives that may vary between individuals. They cannot be definitively proven true or false as they depend on viewpoint, taste, or interpretation. Examples include value judgments, aesthetic assessments, or statements containing evaluative language.

When analyzing a statement, consider:
- Does it contain verifiable facts or measurable data?
- Does it include evaluative terms like "good," "beautiful," "better," "worst," "important," or "significant"?
- Could different people reasonably disagree about the statement?
- Is the statement presenting information that exists independent of human judgment?

Respond only with "objective" or "subjective" based on your analysis."####;

/// User prompt for objectivity classification (paper appendix). Placeholder: `{claim}`.
pub const OBJECTIVITY_USER: &str = r####"Input: {claim}
Is the input subjective or objective?
Answer only subjective or objective:"####;

/// User prompt for claim decomposition (paper appendix; every line keeps the four-space indent
/// and the trailing spaces printed in the listing). Placeholder: `{response}`.
pub const CLAIM_DECOMPOSITION: &str = r####"    Please breakdown the following passage into independent fact pieces. 

    Step 1: For each sentence, you should break it into several fact pieces. Each fact piece should only contain one single independent fact. Normally the format of a fact piece is "subject + verb + object". If the sentence does not contain a verb, you can use "be" as the verb.

    Step 2: Do this for all the sentences. Output each piece of fact in one single line starting with ###. Do not include other formatting. 

    Step 3: Each atomic fact should be self-contained. Do not use pronouns as the subject of a piece of fact, such as he, she, it, this that, use the original subject whenever possible.

    Step 4: If the sentence does not contain any independent fact, you should output "### NONE".

    Here are some examples:

    Example 1:
    Michael Collins (born October 31, 1930) is a retired American astronaut and test pilot who was the Command Module Pilot for the Apollo 11 mission in 1969.
    ### Michael Collins was born on October 31, 1930.
    ### Michael Collins is retired.
    ### Michael Collins is an American.
    ### Michael Collins was an astronaut.
    ### Michael Collins was a test pilot.
    ### Michael Collins was the Command Module Pilot.
    ### Michael Collins was the Command Module Pilot for the Apollo 11 mission.
    ### Michael Collins was the Command Module Pilot for the Apollo 11 mission in 1969.

    Example 2:
    League of Legends (often abbreviated as LoL) is a multiplayer online battle arena (MOBA) video game developed and published by Riot Games. 
    ### League of Legends is a video game.
    ### League of Legends is often abbreviated as LoL.
    ### League of Legends is a multiplayer online battle arena.
    ### League of Legends is a MOBA video game.
    ### League of Legends is developed by Riot Games.
    ### League of Legends is published by Riot Games.

    Example 3:
    Emory University has a strong athletics program, competing in the National Collegiate Athletic Association (NCAA) Division I Atlantic Coast Conference (ACC). The university's mascot is the Eagle.
    ### Emory University has a strong athletics program.
    ### Emory University competes in the National Collegiate Athletic Association Division I.
    ### Emory University competes in the Atlantic Coast Conference.
    ### Emory University is part of the ACC.
    ### Emory University's mascot is the Eagle.

    Example 4:
    Hi
    ### NONE

    Now it's your turn. Here is the passage: 

    {response}

    You should only return the final answer. Now your answer is:"####;

/// User prompt for verbalized confidence (paper appendix; ends with "Now your answer is: ", trailing
/// space included). Placeholders: `{original_question}`, `{claim}`.
pub const VERBALIZED_CONFIDENCE: &str = r####"We are writing an answer to this question: {original_question}

Describe how likely it is that the specific claim below is correct as one of the following expressions: 

No chance (0%)
Little chance (20%)
Less than even (40%)
Fairly possible (60%)
Very good chance (80%)
Almost certain (100%)

Give ONLY your confidence phrase, no other words or explanation. Your answer must contain ONLY one of the confidence phrases above.

Here is the claim: {claim}

Now your answer is: "####;

/// User prompt for unit-QA question creation (paper appendix). Placeholders: `{response}`,
/// `{factoid}`, `{num_questions}`.
pub const UNIT_QA_QUESTIONS: &str = r####"Following this text: {response}
You see the sentence: {factoid}
Generate a list of {num_questions} questions, that might have generated the sentence in the context of the preceding original text. Please do not use specific facts that appear in the follow-up sentence when formulating the questions. Avoid yes-no questions. The questions should have a concise, well-defined answer e.g. only a name, place, or thing. Output each question in one single line starting with ###. Do not include other formatting.

Example:
### Here is the first question? ### Here is the second question?

Now your response is:"####;

/// User prompt for claim merging (paper appendix). Placeholders: `{master_claim_str}`,
/// `{sampled_claim_str}` (claims joined with `\n`, as uqlm does).
pub const CLAIM_MERGING: &str = r####"Given two lists titled "Original Claim List" and "New Claim List", your task is to integrate information from the "New Claim List" into the "Original Claim List". Please follow these detailed steps to ensure accuracy and clarity in the process:
Task 1. **Verification Process:** Your goal is to go through each statement in the "New Claim List" one by one, and determine if it is fully entailed or mentioned by any statement in the "Original Claim List."
Task 2. **Compilation of Non-Entailed Claims:** Generate a list of statements from the "New Claim List" that are not already covered or implied by the "Original Claim List." For each new or unique claim that does not have an equivalent in the original list, format your output by starting each line with a dash ('-').
**Original Claim List:**
{master_claim_str}
**New Claim List:**
{sampled_claim_str}
Begin with the Verification Process to assess each claim's relevance and uniqueness, followed by the Compilation of Non-Entailed Claims to clearly list any new insights that the "New Claim List" provides."####;

/// Uncertainty-aware decoding (UAD) reconstruction prompt. The paper prints none; this is uqlm 0.6.7's
/// `get_response_reconstruction_prompt` (`uqlm/utils/prompts/reconstruction.py`, adapted by uqlm from
/// Jiang et al. 2024), byte for byte including its leading newline and four-space indent.
/// Placeholder: `{facts}` (the kept claims joined with `\n`).
pub const RESPONSE_RECONSTRUCTION: &str = r####"
    Task: You are provided with a list of facts about prompt. Your
    goal is to synthesize these facts into a coherent paragraph. Use
    all the provided facts where possible, ensuring that no fact is
    misrepresented or overlooked. If there are redundant facts, choose
    the most comprehensive one for inclusion. The length of the paragraph
    should naturally reflect the number of provided facts—shorter for
    fewer facts and longer for more. Avoid unnecessary filler and focus
    on presenting the information clearly and concisely.
    The facts:
    {facts}
    "####;

/// uqlm 0.6.7's one-question template (`uqlm/utils/prompts/claim_qa.py`, `get_question_template`),
/// which uqlm uses instead of [`UNIT_QA_QUESTIONS`] when `num_questions == 1`. Placeholder: `{claim}`.
pub const UNIT_QA_SINGLE_QUESTION: &str = r####"
    Create a specific question that has this exact claim as its only correct answer. Return just the question with no extra text.

    Claim: {claim}
    "####;

/// uqlm 0.6.7's answer template when the response so far is given (`get_answer_template`).
/// Placeholders: `{original_response}`, `{claim_question}`.
pub const UNIT_QA_ANSWER_WITH_RESPONSE: &str = r####"
    So far we have written:
    {original_response}
    The next sentence should be the answer to the following question: {claim_question}
    Please answer only this question. Do not answer in a full sentence. Answer with as few words as possible, e.g. only a name, place, or thing.
    "####;

/// uqlm 0.6.7's answer template for a generated question (`get_answer_template`, no response).
/// Placeholder: `{claim_question}`.
pub const UNIT_QA_ANSWER: &str = r####"**Your task**: With this in mind, consider only the following question and answer with as few words as possible:

{claim_question}

Now your answer is:"####;

/// Prefix uqlm 0.6.7 puts before an answer template when the original question is known.
/// Placeholder: `{original_question}`.
pub const UNIT_QA_ANSWER_PREFIX: &str = r####"We are working on an answer to this question: "{original_question}."

"####;

/// System message of the NLI judge (uqlite's own).
pub const NLI_SYSTEM: &str =
    "You check whether a text supports a statement. You reply with one word only.";

/// The NLI judge's yes/no prompt (uqlite's own; the answer word comes first in the reply, so its
/// token log-probability is the judge's probability).
pub const NLI_BINARY: &str = r####"Text: {premise}

Statement: {hypothesis}

If the text above is true, must the statement be true as well? Reply with one word: yes or no."####;

/// The NLI judge's three-way prompt (uqlite's own).
pub const NLI_TERNARY: &str = r####"Text: {premise}

Statement: {hypothesis}

How does the statement relate to the text above? Reply with one word:
entailment (the text shows that the statement is true),
contradiction (the text shows that the statement is false), or
neutral (the text does neither)."####;

/// The local model's yes/no judge prompt (see [`nli_judge_local`](super::nli_judge_local)).
pub const NLI_LOCAL_BINARY: &str = r####"Decide if the statement is supported by the context. Answer yes or no.

Context: Paris is the capital of France.
Statement: Paris is the capital of France.
Answer: yes

Context: Paris is the capital of France.
Statement: Berlin is the capital of France.
Answer: no

Context: {premise}
Statement: {hypothesis}
Answer:"####;

/// The local model's three-way judge prompt (see [`nli_judge_local`](super::nli_judge_local)).
pub const NLI_LOCAL_TERNARY: &str = r####"Decide how the statement relates to the context: entailment, neutral or contradiction.

Context: Paris is the capital of France.
Statement: Paris is the capital of France.
Answer: entailment

Context: Paris is the capital of France.
Statement: Berlin is the capital of France.
Answer: contradiction

Context: Paris is the capital of France.
Statement: Paris has a large museum.
Answer: neutral

Context: {premise}
Statement: {hypothesis}
Answer:"####;
