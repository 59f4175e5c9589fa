// The custom search attributes a conversation sets, by name and Temporal CLI type.
export const SEARCH_ATTRIBUTES = {
  ConversationStatus: 'Keyword',
  ConversationModel: 'Keyword',
  FaheemTenant: 'Keyword',
} as const;
