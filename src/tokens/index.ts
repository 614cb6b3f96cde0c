// Token capture for training (issue 41): records per policy call, prefix linking and loss masks, dialect translation,
// the policy state a trainer sets. Pure logic; the gateway (src/gateway/training.ts) does the I/O.
export { TOKEN_RECORDS_FILE, TOKEN_RECORD_SCHEMA_VERSION, tokenDigest, cumulativeOf, inputItemsOf, parseTokenRecords, type Dialect, type ParentResolution, type TokenRecord } from './records.ts';
export { linkCalls, DEFAULT_LINK_SETTINGS, type LinkSettings, type UnextendedCall, type BrokenLineage, type TokenRollout, type TokenSequence, type CallLink, type SequenceSpan } from './lineage.ts';
export { withCaptureFields, tokensOfChatAnswer, type Sampling, type CapturedTokens } from './vllm.ts';
export { chatRequestOf, replyOf, chatAnswerOf, DialectError, type DialectReply, type ChatAnswer, type ChatMessage, type ChatRequest, type ChatTool, type ChatToolCall } from './dialects/index.ts';
export { LocalPolicyState, PolicyStateHub, POLICY_REFRESH_MS, DRAIN_SETTLE_MS, type PolicyEndpoint, type PolicyState, type PolicyStateSource } from './policy-state.ts';
export { POLICY_QUERY, TOKEN_ROLLOUT_FILE, policyStateOf, initialPolicyState, trainingRefusal, callsPolicy, rowTrainingOf, type EpisodeTraining, type RunPolicy, type RowTraining } from './training.ts';
export { classifyPolicyProbe, probeRequest, PROBE_TEMPERATURES, type PolicyProbe } from './probe.ts';
