// The public SDK.
export { Agent, Conversation, ConversationNotFoundError, FileEditorTool, LLM, TaskTrackerTool, TerminalTool } from './client.js';
export { connectClient } from './connection.js';
export * from './types.js';
