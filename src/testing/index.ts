/**
 * `faheemcode/testing`: scripted model servers (OpenAI-compatible chat completions, OpenAI's Responses API, and Anthropic's Messages API), for testing agents, tools and
 * workers without a real model (the repository's tests and offline demo use it too).
 *
 * @packageDocumentation
 */
export * from './scripted-model.js';
export * from './scripted-anthropic.js';
export * from './scripted-responses.js';
