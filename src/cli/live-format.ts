// How `faheem events --follow` prints live lines as text: the reply as it streams (written as it
// comes, on one growing line), thinking dimmed, a command's output as it comes, and a retry marker
// saying that the text above it is void. Not a tool call's arguments as they form: raw JSON, which
// the action event then shows formatted. Pure: it returns what to write; the caller writes it.
import pc from 'picocolors';
import type { LiveDelta } from '../live/types.js';

/** Terminal control characters a command or a model could send (colours aside, they could move the cursor or retitle the window). */
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[\]PX^_][\s\S]*?(?:\x07|\x1b\\)|[\x00-\x08\x0b-\x1f\x7f]/g;

/** `text` with terminal control sequences taken out (newlines and tabs stay). */
export function plainText(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(CONTROL, '');
}

/** Turns live lines into text for a terminal; see the module comment. */
export class LivePrinter {
  private open: string | undefined;

  /** What to write for one live line. */
  line(d: LiveDelta): string {
    const key = `${d.kind}:${d.toolCallId ?? ''}`;
    let out = '';
    if (d.kind === 'retry') {
      out += this.close() + pc.yellow(`[${plainText(d.text)}]`) + '\n';
      return out;
    }
    // A tool call's arguments as they form are raw JSON: the action event that follows shows the call.
    if (d.kind === 'model_delta' && d.toolCallId) return '';
    if (this.open !== key) {
      out += this.close();
      this.open = key;
      if (d.kind === 'thinking_delta') out += pc.dim('thinking: ');
    }
    const text = plainText(d.text);
    if (d.kind === 'thinking_delta') out += pc.dim(text);
    else if (d.kind === 'output_delta') out += pc.dim(text);
    else out += text;
    if (text.endsWith('\n') && d.kind === 'output_delta') this.open = `${key}:nl`;
    return out;
  }

  /** What to write before an event is printed: end the growing line, if one is open. */
  beforeEvent(): string {
    return this.close();
  }

  private close(): string {
    const wasOpen = this.open;
    this.open = undefined;
    if (!wasOpen || wasOpen.endsWith(':nl')) return '';
    return '\n';
  }
}
