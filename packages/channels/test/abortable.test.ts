import { afterEach, describe, expect, it } from 'vitest';
import { abortable } from '../src/abortable.ts';

const unhandled: unknown[] = [];
const collect = (reason: unknown) => void unhandled.push(reason);
afterEach(() => {
  process.off('unhandledRejection', collect);
  unhandled.length = 0;
});

/** Lets the event loop turn, so that a rejection nobody handles is reported. */
const turns = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe('abortable', () => {
  it('answers what the work answers while the signal holds', async () => {
    await expect(abortable(Promise.resolve('sent'), new AbortController().signal)).resolves.toBe('sent');
  });

  it('stops waiting when the signal aborts, with its reason', async () => {
    const controller = new AbortController();
    const waiting = abortable(new Promise(() => undefined), controller.signal);
    controller.abort(new DOMException('The server gate was closed.', 'AbortError'));
    await expect(waiting).rejects.toThrow('The server gate was closed.');
  });

  it('handles the end of a request sent under a signal that had aborted already', async () => {
    process.on('unhandledRejection', collect);
    const controller = new AbortController();
    controller.abort(new DOMException('The channel did not answer within 5000 ms.', 'TimeoutError'));
    let fail = (_error: Error) => undefined as void;
    const request = new Promise<never>((_, reject) => (fail = reject));
    await expect(abortable(request, controller.signal)).rejects.toThrow('did not answer');
    fail(new Error('fetch failed: read ECONNRESET'));
    await turns();
    expect(unhandled).toEqual([]);
  });
});
