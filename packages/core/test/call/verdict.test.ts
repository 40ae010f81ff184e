/** How a validator's answer is read: only a well-formed result is trusted, and a throw is a refusal. */
import { describe, expect, it } from 'vitest';
import { check } from '../../src/call/steps/verdict.ts';
import type { ValidationResult } from '../../src/schema/schema.ts';

function verdict(answer: () => unknown): ValidationResult | undefined {
  let result: ValidationResult | undefined;
  check(answer as never, 'value', (r) => (result = r));
  return result;
}

describe('a validator’s answer', () => {
  it('is a success only as { ok: true, value }, answered synchronously for a sync validator', () => {
    expect(verdict(() => ({ ok: true, value: 42 }))).toEqual({ ok: true, value: 42 });
  });

  it.each([
    ['{ ok: true } without a value', { ok: true }],
    ['ok that is not true', { ok: 'yes', value: 42 }],
    ['null', null],
    ['a string', 'fine'],
  ])('is a refusal when it is %s', (_name, answer) => {
    expect(verdict(() => answer)).toEqual({
      ok: false,
      issues: [
        { path: '', message: 'the validator answered neither { ok: true, value } nor { ok: false, issues }' },
      ],
    });
  });

  it('is a refusal that says so when it refuses without issues', () => {
    expect(verdict(() => ({ ok: false, issues: [] }))).toEqual({
      ok: false,
      issues: [{ path: '', message: 'the validator refused the value without saying why' }],
    });
  });

  it('keeps issues as text: a path that is not a string is the root, a message that is not a string is its text', () => {
    expect(
      verdict(() => ({ ok: false, issues: [{ path: 3, message: { why: 'odd' }, keyword: 'type' }, null] })),
    ).toEqual({
      ok: false,
      issues: [
        { path: '', message: '{"why":"odd"}', keyword: 'type' },
        { path: '', message: 'undefined' },
      ],
    });
  });

  it('is a refusal when the validator throws, rejects, or its answer cannot be read', async () => {
    expect(
      verdict(() => {
        throw new Error('boom');
      }),
    ).toEqual({ ok: false, issues: [{ path: '', message: 'the validator threw: boom' }] });
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('revoked');
        },
      },
    );
    expect(verdict(() => hostile)).toEqual({
      ok: false,
      issues: [{ path: '', message: 'the validator threw: revoked' }],
    });
    const rejected = await new Promise<ValidationResult>((resolve) =>
      check(() => Promise.reject(new Error('later')), 1, resolve),
    );
    expect(rejected).toEqual({ ok: false, issues: [{ path: '', message: 'the validator threw: later' }] });
  });

  it('is awaited when it is a promise', async () => {
    let result: ValidationResult | undefined;
    check((() => Promise.resolve({ ok: true, value: 'late' })) as never, 1, (r) => (result = r));
    expect(result).toBeUndefined();
    await Promise.resolve();
    await Promise.resolve();
    expect(result).toEqual({ ok: true, value: 'late' });
  });
});
