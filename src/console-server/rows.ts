// What the console's API answers about conversations: plain data, shared by the server and the
// page (console-page/main.tsx), so the two cannot drift. Types only: the page's bundle takes nothing.

/** One conversation as the list shows it. */
export interface ConversationRow {
  id: string;
  /** The first message on one line (the memo's title; null for conversations started before it held one). */
  title: string | null;
  /** The workspace on its host (from the memo). */
  workspace: string | null;
  /** The ConversationStatus search attribute (null before a worker ever ran it). */
  status: string | null;
  /** Whether the workflow has completed (closed, or its idle timeout). */
  closed: boolean;
  /** The model its calls use (null while it is the worker's and no call has said which). */
  model: string | null;
  /** USD, from the conversation's state (null until known). */
  cost: number | null;
  startTime: string;
  /** The close time, else when the current run began. */
  lastActivity: string;
  /** The conversation that started this one as a sub-agent. */
  parentId: string | null;
  /** The team API's tenant it belongs to (the FaheemTenant search attribute; null: none). */
  tenant: string | null;
}

/** A page of the list and the token of the next page (null at the end). */
export interface ConversationPage {
  conversations: ConversationRow[];
  nextPageToken: string | null;
}

/** A sub-agent and its own sub-agents. */
export interface ChildNode extends ConversationRow {
  children: ChildNode[];
}
