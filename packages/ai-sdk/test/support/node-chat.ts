import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type ChatState,
  type ChatStatus,
  type UIMessage,
} from 'ai';

class PlainState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[];
  constructor(messages: UIMessage[]) {
    this.messages = messages;
  }
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/**
 * useChat's engine without React: the AI SDK's own `AbstractChat` over its `DefaultChatTransport`,
 * continuing by itself once every approval of the last step is answered, as the canonical
 * human-in-the-loop page configures useChat.
 */
export class NodeChat extends AbstractChat<UIMessage> {
  private readonly waiting: (() => void)[];
  /** Each request body the chat sent, in order. */
  readonly requests: unknown[];

  constructor(url: string, user: string, id: string, messages: UIMessage[] = []) {
    const waiting: (() => void)[] = [];
    const requests: unknown[] = [];
    const settle = () => {
      for (const resolve of waiting.splice(0)) resolve();
    };
    super({
      id,
      state: new PlainState(messages),
      transport: new DefaultChatTransport({
        api: url,
        headers: { 'x-user': user },
        fetch: (input, init) => {
          requests.push(JSON.parse(init?.body as string));
          return fetch(input, init);
        },
      }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onFinish: settle,
      onError: settle,
    });
    this.waiting = waiting;
    this.requests = requests;
  }

  /** Resolves when the next response has been read to its end (or failed). */
  answered(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The chat's tool parts, in order, across messages. */
  toolParts(): Record<string, unknown>[] {
    return this.messages.flatMap(
      (message) => message.parts.filter((part) => part.type.startsWith('tool-')) as Record<string, unknown>[],
    );
  }

  /** The latest `data-toolgate` record of each call, by call id. */
  records(): Map<string, { status: string; reason?: { code: string; issues?: unknown[] } }> {
    const found = new Map<string, { status: string; reason?: { code: string; issues?: unknown[] } }>();
    for (const message of this.messages) {
      for (const part of message.parts) {
        if (part.type === 'data-toolgate')
          found.set((part as { id: string }).id, (part as { data: { record: never } }).data.record);
      }
    }
    return found;
  }

  /** The refusal each call's latest data part carries, by call id. */
  refusals(): Map<string, { code: string }> {
    const found = new Map<string, { code: string }>();
    for (const message of this.messages) {
      for (const part of message.parts) {
        const data = (part as { data?: { refusal?: { code: string } } }).data;
        if (part.type === 'data-toolgate' && data?.refusal !== undefined)
          found.set((part as { id: string }).id, data.refusal);
      }
    }
    return found;
  }

  /** Says something and waits for the whole answer, continuations included. */
  async say(text: string): Promise<void> {
    const done = this.answered();
    await this.sendMessage({ text });
    await done;
  }

  /** Answers the pending approval of a call as useChat's buttons do, and waits for the continuation. */
  async answer(toolCallId: string, approved: boolean): Promise<void> {
    const part = this.toolParts().find((candidate) => candidate['toolCallId'] === toolCallId);
    const approval = part?.['approval'] as { id: string } | undefined;
    if (approval === undefined) throw new Error(`no approval to answer for ${toolCallId}`);
    const done = this.answered();
    await this.addToolApprovalResponse({ id: approval.id, approved });
    await done;
  }
}
