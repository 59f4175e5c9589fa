/**
 * `faheemcode/testing`: a scripted, OpenAI-compatible model server, for testing agents, tools and
 * workers without a real model (the repository's tests and offline demo use it too).
 *
 * @packageDocumentation
 */
export * from './scripted-model.js';
