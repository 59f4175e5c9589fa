// Where faheem keeps its files beside a worker or client: undo history, full outputs, payloads.
// FAHEEM_HOME is read by its area parser (src/settings/home.ts).
export { faheemHome } from './settings/home.js';
