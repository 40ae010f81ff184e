import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { postgresLedger } from '@toolgate/server';
import { afterAll, describe, expect, it } from 'vitest';
import { startGateway, testUpstream, scratch, textOf } from './support/gateway.ts';
import { approveOnPage, pageCalls } from './support/page-api.ts';

// PostgreSQL on this machine (127.0.0.1:5432, trust auth), or TOOLGATE_TEST_POSTGRES_URL: a
// database of its own for this file, dropped after it. Without PostgreSQL the suite is skipped
// with a loud line, except under CI, where it fails.
const ADMIN = process.env.TOOLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `tg_mcp_${randomBytes(5).toString('hex')}`;

async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const database = await admin(ADMIN, async (client) => {
  await client.query(`create database ${name}`);
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  return url.toString();
}).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));

afterAll(async () => {
  if (typeof database === 'string')
    await admin(ADMIN, (client) => client.query(`drop database if exists ${name} with (force)`));
});

const reachable = typeof database === 'string';
if (!reachable && process.env.CI !== 'true')
  console.warn(`\n!!! SKIPPING the gateway's PostgreSQL tests: ${database.message}\n`);

// Without PostgreSQL, outside CI, the suite is not declared: the warning above says it did not run.
const describeOnPostgres = !reachable && process.env.CI !== 'true' ? () => undefined : describe;

describeOnPostgres('a ledger on PostgreSQL, by URL', () => {
  it('keeps the calls there: two gateways share it, a call approved on one runs once, and the trail verifies', async () => {
    if (typeof database !== 'string')
      throw new Error(`PostgreSQL is required when CI=true: ${database.message}`);
    const dir = scratch();
    const config = {
      ledger: database,
      upstreams: { test: testUpstream(dir) },
      principal: 'ada',
      approvalWaitMs: 200,
    };
    const one = await startGateway({ dir, config });
    const two = await startGateway({ dir, config });
    const note = { path: 'notes/pg.md', text: 'shared' };
    expect(
      (
        await one.client.callTool({
          name: 'write_note',
          arguments: note,
          _meta: { 'toolgate/callId': 'pg-1' },
        })
      )._meta,
    ).toMatchObject({ 'toolgate/status': 'awaiting_approval' });
    // The second gateway's page shows the call the first one holds, and approves it.
    const shown = (await pageCalls(two.approvalUrl, 'mcp:ada')).find((call) => call.id === 'pg-1');
    expect((await approveOnPage(two.approvalUrl, 'pg-1', shown?.input)).status).toBe(200);
    const a = await one.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'pg-1' },
    });
    const b = await two.client.callTool({
      name: 'write_note',
      arguments: note,
      _meta: { 'toolgate/callId': 'pg-1' },
    });
    expect(textOf(a)).toBe('wrote notes/pg.md');
    expect(b).toEqual(a);
    expect(one.upstreamLog()).toEqual(['write_note notes/pg.md shared']);

    const ledger = await postgresLedger({ connectionString: database });
    try {
      expect(await ledger.verify()).toMatchObject({ ok: true });
    } finally {
      await ledger.close();
    }
  });

  it("records an upstream's isError result failed / tool_error there, and answers the result unchanged", async () => {
    if (typeof database !== 'string')
      throw new Error(`PostgreSQL is required when CI=true: ${database.message}`);
    const dir = scratch();
    const gateway = await startGateway({
      dir,
      config: {
        ledger: database,
        upstreams: { test: testUpstream(dir) },
        principal: 'grace',
        tools: { fail: { approval: 'never' } },
      },
    });
    const result = await gateway.client.callTool({
      name: 'fail',
      arguments: {},
      _meta: { 'toolgate/callId': 'pg-fail-1' },
    });
    expect(result).toEqual({
      content: [{ type: 'text', text: 'the note is locked' }],
      isError: true,
      _meta: { 'toolgate/callId': 'pg-fail-1', 'toolgate/status': 'failed', 'toolgate/reason': 'tool_error' },
    });

    const ledger = await postgresLedger({ connectionString: database });
    try {
      const { calls } = await ledger.snapshot('mcp:grace');
      expect(calls.map((call) => [call.id, call.status, call.reason?.code])).toEqual([
        ['pg-fail-1', 'failed', 'tool_error'],
      ]);
      expect(calls[0]?.reason?.message).toContain('the note is locked');
    } finally {
      await ledger.close();
    }
  });
});
