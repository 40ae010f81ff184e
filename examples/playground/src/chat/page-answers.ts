import type { SettledCall } from '@toolgate/core';

/**
 * What this tab's gate settled for the calls the server handed it, kept in `sessionStorage` until
 * the server's transcript has it: a reload between the commit and the server's receipt of it (or
 * a post that failed while the server was away) sends the same record again, rather than running
 * the call a second time.
 */
export interface PageAnswers {
  readonly get: (id: string) => SettledCall | undefined;
  readonly keep: (record: SettledCall) => void;
  /** The server has the answer: this tab need not keep it. */
  readonly forget: (id: string) => void;
}

export function pageAnswers(
  chat: string,
  storage: Storage | undefined = globalThis.sessionStorage,
): PageAnswers {
  const key = `toolgate-playground:page-answers:${chat}`;
  const read = (): Record<string, SettledCall> => {
    try {
      return JSON.parse(storage?.getItem(key) ?? '{}') as Record<string, SettledCall>;
    } catch {
      return {};
    }
  };
  const write = (answers: Record<string, SettledCall>) => {
    try {
      if (Object.keys(answers).length === 0) storage?.removeItem(key);
      else storage?.setItem(key, JSON.stringify(answers));
    } catch {
      // Storage full or refused: the answer still goes to the server; only a reload before it arrives would lose it.
    }
  };
  return {
    get: (id) => read()[id],
    keep: (record) => write({ ...read(), [record.id]: record }),
    forget(id) {
      const answers = read();
      if (!(id in answers)) return;
      delete answers[id];
      write(answers);
    },
  };
}
