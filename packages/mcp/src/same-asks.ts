import { hash } from 'node:crypto';
import { canonicalJson } from '@toolgate/core/kit';

/** One call that identical requests of a client session join, and whether one of them is asking the client's person. */
interface Open {
  readonly id: string;
  /** Whether the call went to a person; until its first proposal is answered, a joiner waits on it. */
  readonly waits: Promise<boolean>;
  asking: boolean;
}

/**
 * The calls of one client session that wait for a person, by tool and arguments. A client that
 * cannot name its calls (Claude Desktop, Cursor: the model writes only the arguments) asks again
 * with the same arguments once it was told the call waits; that request joins the call rather
 * than opening another, so a person approving both cannot run it twice. A call is joined until
 * its outcome has been answered once: the request after that is a new call.
 */
export class SameAsks {
  readonly #open = new Map<string, Open>();

  /**
   * The call an identical request joins (`joined: true`), or a new id, opened for the identical
   * requests that come while its proposal is answered. `undefined` when the arguments cannot be
   * keyed (the gate refuses them anyway).
   */
  async take(
    name: string,
    args: unknown,
    newId: () => string,
  ): Promise<{ key: string; id: string; joined: boolean; settle: (waits: boolean) => void } | undefined> {
    let key: string;
    try {
      // Hashed here, synchronously: every request without a call id comes this way, and Web
      // Crypto's digest would cost a trip through the thread pool on each.
      key = `${name}\u0000${hash('sha256', canonicalJson(args))}`;
    } catch {
      return undefined;
    }
    const open = this.#open.get(key);
    if (open !== undefined && (await open.waits) && this.#open.get(key) === open)
      return { key, id: open.id, joined: true, settle: () => undefined };
    let settle!: (waits: boolean) => void;
    const waits = new Promise<boolean>((resolve) => (settle = resolve));
    const entry: Open = { id: newId(), waits, asking: false };
    this.#open.set(key, entry);
    for (const oldest of this.#open.keys()) {
      if (this.#open.size <= MAX_OPEN) break;
      this.#open.delete(oldest);
    }
    return {
      key,
      id: entry.id,
      joined: false,
      settle: (goesToPerson) => {
        if (!goesToPerson) this.answered(key, entry.id);
        settle(goesToPerson);
      },
    };
  }

  /**
   * Lets this request ask the client's person about the call (a release function), or not
   * (`undefined`) while another request of the session already asks: one dialog per call.
   */
  claimAsking(key: string, id: string): (() => void) | undefined {
    const open = this.#open.get(key);
    if (open?.id !== id) return () => undefined;
    if (open.asking) return undefined;
    open.asking = true;
    return () => (open.asking = false);
  }

  /** The call's outcome was answered: the next identical request is a new call. */
  answered(key: string, id: string): void {
    if (this.#open.get(key)?.id === id) this.#open.delete(key);
  }
}

/** How many waiting calls a client session keeps joinable; a client with more is not a chat. */
const MAX_OPEN = 256;
