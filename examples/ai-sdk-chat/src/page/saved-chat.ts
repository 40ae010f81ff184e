import type { UIMessage } from 'ai';
import { useEffect, useState } from 'react';

const KEY = 'ai-sdk-chat';

/**
 * The chat this browser kept across reloads: its id (the server gate's session) and its messages,
 * or a new one. What is kept is only the page's copy: the server answers every tool call from its
 * ledger, whatever this copy says.
 */
export function useSavedChat<M extends UIMessage>(): { id: string; messages: M[] } {
  const [saved] = useState(() => {
    try {
      const stored = JSON.parse(localStorage.getItem(KEY) ?? 'null') as {
        id?: unknown;
        messages?: unknown;
      } | null;
      if (typeof stored?.id === 'string' && Array.isArray(stored.messages))
        return { id: stored.id, messages: stored.messages as M[] };
    } catch {
      // An unreadable copy: start a new chat.
    }
    return { id: crypto.randomUUID(), messages: [] as M[] };
  });
  return saved;
}

/** Keeps the chat's messages in this browser as they change. */
export function useSaveChat(id: string, messages: readonly UIMessage[]): void {
  useEffect(() => localStorage.setItem(KEY, JSON.stringify({ id, messages })), [id, messages]);
}
