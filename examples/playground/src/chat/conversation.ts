import { createToolGate, type ToolGate } from '@toolgate/core';
import { cachedJsonSchema } from '../shop/schema-cache.ts';
import { createShopStore, type ShopStore } from '../shop/shop-store.ts';
import { createShopTools } from '../shop/shop-tools.ts';
import type { ToolTiming } from '../shop/tool-timing.ts';
import { watchAudit, type AuditFeed } from './audit-feed.ts';
import { createChatSession, type ChatSession } from './chat-session.ts';
import { connect, type ModelConnection } from './model-connection.ts';
import { watchVerdict, type VerdictStore } from './state-verdict.ts';

/** Everything one conversation owns: a fresh shop, its gate, the chat, and what watches them. */
export interface Conversation {
  readonly id: number;
  readonly shop: ShopStore;
  readonly gate: ToolGate;
  readonly session: ChatSession;
  readonly verdict: VerdictStore;
  readonly audit: AuditFeed;
  readonly modelLabel: string;
  /** Stops the chat and every watcher; the conversation is not used again. */
  readonly dispose: () => void;
}

let conversations = 0;

export function startConversation(connection: ModelConnection, timing: ToolTiming): Conversation {
  const shop = createShopStore();
  const gate = createToolGate({ tools: createShopTools(timing), store: shop, jsonSchema: cachedJsonSchema });
  const connected = connect(connection);
  const session = createChatSession(gate, connected);
  const verdict = watchVerdict(shop, gate);
  const audit = watchAudit(gate);
  return {
    id: ++conversations,
    shop,
    gate,
    session,
    verdict: verdict.verdict,
    audit: audit.feed,
    modelLabel: connected.label,
    dispose: () => {
      session.stop();
      verdict.stop();
      audit.stop();
    },
  };
}
