// The openai agent's pieces: a conversation file, one model call, one bash tool call, the transcript, the
// call limit, and the in-process loop that strings them together.
export type * from './types.ts';
export { ContextLengthExceeded, ModelCallFailed, ModelRequestRejected } from './errors.ts';
export { readConversation, appendRecord, startConversation, messagesOf, toolResultFor, lastAssistant, pendingToolCalls } from './conversation.ts';
export { toolCallsOf } from './tool-calls.ts';
export { callModel, apiKeyEnvOf, DEFAULT_API_KEY_ENV, type CallModelOptions, type CallModelResult } from './call-model.ts';
export { runBashTool, BASH_TOOL, BASH_TOOL_NAME, DEFAULT_TOOL_OUTPUT_CAP, type BashToolInput, type BashToolResult } from './bash-tool.ts';
export { openaiTrajectory, transcriptOf, finalTextOf, usageOf, type OpenAiTrajectoryOptions, type OpenAiTranscript } from './trajectory.ts';
export { nextAction, nextActionOf, type NextAction } from './next-action.ts';
export { tallyOf, turnStepOf, callLimitReason, TIME_BUDGET_REASON, type TurnTally, type TurnLimits, type TurnStep } from './turn-step.ts';
export { callBudget, callBudgetOf, DEFAULT_MAX_CALLS, type CallBudget } from './limits.ts';
export type { RetryOptions } from './retry.ts';
export {
  runOpenAiTurnLocally,
  openAiOptionsFromArgs,
  openaiHarness,
  defaultSystemPrompt,
  CONVERSATION_FILE,
  type OpenAiTurnOptions,
} from './local-loop.ts';
export { describeEndpoint, listMcpTools, mcpFunctionName, mcpFunctionTools, runMcpTool, type McpCallOptions, type McpEndpoint, type McpToolBinding, type StdioStarter } from './mcp.ts';
export { reachedInMain } from './mcp-relay.ts';
