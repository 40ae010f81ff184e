import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, inputHash } from '../src/index.ts';
import { shownInputHash } from '../src/kit.ts';

const plain = defineTool({
  name: 'transfer',
  inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
  execute: () => 'ok',
});

const trimmed = defineTool({
  name: 'transfer',
  inputSchema: z.object({ to: z.string().trim(), note: z.string().default('none') }),
  execute: () => 'ok',
});

describe('shownInputHash', () => {
  it('is the input hash of what is shown when the tool reads it as it is', async () => {
    expect(await shownInputHash(plain, { to: 'sam@example.com' })).toBe(
      await inputHash({ to: 'sam@example.com' }),
    );
  });

  it('reads the shown input through a transforming Standard Schema, so it names the input the ledger holds', async () => {
    expect(await shownInputHash(trimmed, { to: '  sam@example.com ' })).toBe(
      await inputHash({ to: 'sam@example.com', note: 'none' }),
    );
  });

  it('hashes an input the schema refuses as it is, so it matches no validated input', async () => {
    expect(await shownInputHash(trimmed, { to: 42 })).toBe(await inputHash({ to: 42 }));
  });

  it('never throws for an input with no JSON form; it answers a hash no call holds', async () => {
    expect(await shownInputHash(undefined, () => 1)).toBe('no-json-form');
    expect(await shownInputHash(plain, undefined)).toBe('no-json-form');
  });

  it('answers the plain hash when the tool is unknown', async () => {
    expect(await shownInputHash(undefined, { a: 1 })).toBe(await inputHash({ a: 1 }));
  });
});
