import { describe, expect, it } from 'vitest';
import { createSequencer } from '../../src/ledger/sequencer.ts';

/** A pass the test lets finish when it wants, answering how many events it chained. */
function controlledPasses() {
  const passes: { readonly finish: (chained: number) => void; readonly fail: (error: unknown) => void }[] =
    [];
  const pass = () =>
    new Promise<number>((resolve, reject) => {
      passes.push({ finish: resolve, fail: reject });
    });
  return { passes, pass };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the sequencer', () => {
  it('runs one pass at a time, and kicks made during a pass ask for exactly one more', async () => {
    const { passes, pass } = controlledPasses();
    const sequencer = createSequencer({
      pass,
      batch: 500,
      anyPending: () => Promise.resolve(false),
      onError: () => undefined,
      closing: () => false,
    });
    sequencer.kick();
    await tick();
    sequencer.kick();
    sequencer.kick();
    await tick();
    expect(passes).toHaveLength(1);
    passes[0]?.finish(3);
    await tick();
    expect(passes).toHaveLength(2);
    passes[1]?.finish(0);
    await tick();
    expect(passes).toHaveLength(2);
  });

  it('resolves a waiter only after a pass that began after it asked', async () => {
    const { passes, pass } = controlledPasses();
    const sequencer = createSequencer({
      pass,
      batch: 500,
      anyPending: () => Promise.resolve(false),
      onError: () => undefined,
      closing: () => false,
    });
    sequencer.kick();
    await tick();
    let chained = false;
    void sequencer.chained().then(() => (chained = true));
    passes[0]?.finish(1); // began before the waiter asked: its events may not be among these
    await tick();
    expect(chained).toBe(false);
    expect(passes).toHaveLength(2);
    passes[1]?.finish(1);
    await tick();
    expect(chained).toBe(true);
  });

  it('goes on while a pass chains a full batch, as more may be pending', async () => {
    const { passes, pass } = controlledPasses();
    const sequencer = createSequencer({
      pass,
      batch: 2,
      anyPending: () => Promise.resolve(false),
      onError: () => undefined,
      closing: () => false,
    });
    sequencer.kick();
    await tick();
    passes[0]?.finish(2);
    await tick();
    expect(passes).toHaveLength(2);
    passes[1]?.finish(1);
    await tick();
    expect(passes).toHaveLength(2);
  });

  it('reports a pass that failed, lets its waiters go, and passes again at the next kick', async () => {
    const { passes, pass } = controlledPasses();
    const errors: unknown[] = [];
    const sequencer = createSequencer({
      pass,
      batch: 500,
      anyPending: () => Promise.resolve(false),
      onError: (error) => errors.push(error),
      closing: () => false,
    });
    const waiting = sequencer.chained();
    await tick();
    passes[0]?.fail(new Error('database down'));
    await waiting;
    expect(errors).toEqual([new Error('database down')]);
    sequencer.kick();
    await tick();
    expect(passes).toHaveLength(2);
  });

  it('flushes only when something is pending, and starts no pass once the ledger closes', async () => {
    const { passes, pass } = controlledPasses();
    let pending = false;
    let closing = false;
    const sequencer = createSequencer({
      pass,
      batch: 500,
      anyPending: () => Promise.resolve(pending),
      onError: () => undefined,
      closing: () => closing,
    });
    await sequencer.flush();
    expect(passes).toHaveLength(0);
    pending = true;
    const flushed = sequencer.flush();
    await tick();
    expect(passes).toHaveLength(1);
    passes[0]?.finish(1);
    await flushed;
    closing = true;
    await sequencer.chained();
    expect(passes).toHaveLength(1);
  });
});
