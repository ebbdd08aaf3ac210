-- uqlite schema, migration 9: the generation LLM's token log-probabilities of the answers and
-- samples uqlite generated (config "logprobs": true), as uq_generate's column `logprobs` gives
-- them, so that the white-box scorers can score them later without a new call.

ALTER TABLE uq_answer ADD COLUMN logprobs TEXT;   -- JSON array of {token, offset, logprob, top_logprobs}; NULL: none
ALTER TABLE uq_sample ADD COLUMN logprobs TEXT;   -- the same, per sample
