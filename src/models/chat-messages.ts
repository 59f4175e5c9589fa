// The prompt in chat completions' own terms: our fields (reasoning, a function call's Responses item
// id, images) taken out, images as `image_url` content parts with data URLs. Pure.
import type OpenAI from 'openai';
import { dataUrl, missingImageText } from '../images/prompt-images.js';
import type { ChatMessage, PromptImage } from '../core/types.js';

type Param = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** What the model reads before the images a tool gave (they come in a user message after the results). */
export const TOOL_IMAGES_NOTE = 'The images the tool calls above gave back:';

function imageParts(images: readonly PromptImage[]): Part[] {
  return images.map((img) =>
    img.data === undefined
      ? { type: 'text', text: missingImageText(img) }
      : { type: 'image_url', image_url: { url: dataUrl({ ...img, data: img.data }) } },
  );
}

/** Chat-completions messages as the API takes them, images included. */
export function chatCompletionsMessages(messages: readonly ChatMessage[]): Param[] {
  const out: Param[] = [];
  // Images of the tool results in a row: a tool message cannot carry an image, and no other message
  // may come between an assistant's tool calls and their results, so they follow all the results
  // as one user message.
  let toolImages: PromptImage[] = [];
  const flushToolImages = () => {
    if (toolImages.length) out.push({ role: 'user', content: [{ type: 'text', text: TOOL_IMAGES_NOTE }, ...imageParts(toolImages)] });
    toolImages = [];
  };
  for (const m of messages) {
    if (m.role !== 'tool') flushToolImages();
    switch (m.role) {
      case 'user':
        out.push(
          m.images?.length
            ? { role: 'user', content: [{ type: 'text', text: m.content }, ...imageParts(m.images)] }
            : { role: 'user', content: m.content },
        );
        break;
      case 'tool':
        out.push({ role: 'tool', tool_call_id: m.tool_call_id, content: m.content });
        toolImages.push(...(m.images ?? []));
        break;
      case 'assistant': {
        if (!m.reasoning && !m.tool_calls?.some((c) => c.item_id)) {
          out.push(m as Param);
          break;
        }
        const rest = { ...m };
        delete rest.reasoning;
        if (rest.tool_calls) rest.tool_calls = rest.tool_calls.map(({ item_id: _, ...c }) => c);
        out.push(rest as Param);
        break;
      }
      default:
        out.push(m);
    }
  }
  flushToolImages();
  return out;
}
