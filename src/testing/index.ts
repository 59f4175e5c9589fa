export * from './scripted-model.js';
