/** One run of a tool: its signal is made on first use, and a tool sees only its context. */
import { describe, expect, it } from 'vitest';
import { Run, RunContext } from '../../src/call/steps/run.ts';

describe('a run', () => {
  it('makes its signal on first use, already aborted when the run was stopped before', () => {
    const run = new Run();
    const reason = new DOMException('stop', 'AbortError');
    run.abort(reason);
    run.abort(new DOMException('again', 'TimeoutError'));
    expect(run.signal().aborted).toBe(true);
    expect(run.signal().reason).toBe(reason);
  });

  it('aborts a signal a tool already holds', () => {
    const run = new Run();
    const signal = run.signal();
    expect(signal.aborted).toBe(false);
    run.abort(new DOMException('The call timed out after 5 ms.', 'TimeoutError'));
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('gives the tool a context: the call, an idempotency key (the id unless the keeper gives one), the run’s signal', () => {
    const run = new Run();
    const plain = new RunContext(run, 'c1', 'charge', undefined);
    expect(plain).toMatchObject({
      call: { id: 'c1', name: 'charge' },
      idempotencyKey: 'c1',
      transaction: undefined,
    });
    const given = new RunContext(run, 'c1', 'charge', { idempotencyKey: 'k-9', transaction: 'tx' });
    expect(given).toMatchObject({ idempotencyKey: 'k-9', transaction: 'tx' });
    run.abort(new DOMException('stop', 'AbortError'));
    expect(given.signal.aborted).toBe(true);
  });
});
