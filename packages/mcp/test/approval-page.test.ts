import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startGateway, testUpstream, scratch } from './support/gateway.ts';
import { pageApi } from './support/page-api.ts';

async function gateway() {
  const dir = scratch();
  return startGateway({
    dir,
    config: { upstreams: { test: testUpstream(dir) }, principal: 'ada', approvalWaitMs: 100 },
  });
}

function rawGet(url: URL, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, headers: { Host: host } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('the approval page and its token', () => {
  it('is served on 127.0.0.1 with the token in its link, and the page and its assets carry it', async () => {
    const gw = await gateway();
    const url = new URL(gw.approvalUrl);
    expect(url.hostname).toBe('127.0.0.1');
    const token = url.searchParams.get('token') ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toContain('"session":"mcp:ada"');
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1] ?? '');
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset).toContain(`?token=${token}`);
      expect((await fetch(new URL(asset, url.origin))).status).toBe(200);
      expect((await fetch(new URL(asset.replace(/\?token=.*$/, ''), url.origin))).status).toBe(401);
    }
  });

  it('refuses the page, its assets and its API without the token, or with another', async () => {
    const gw = await gateway();
    await gw.client.callTool({
      name: 'write_note',
      arguments: { path: 'notes/a', text: 'a' },
      _meta: { 'toolgate/callId': 'page-1' },
    });
    const origin = new URL(gw.approvalUrl).origin;
    expect((await fetch(origin)).status).toBe(401);
    expect((await fetch(`${origin}/?token=wrong`)).status).toBe(401);
    const listed = await pageApi(gw.approvalUrl, '/sessions/mcp%3Aada/calls', { token: false });
    expect(listed.status).toBe(401);
    expect(((await listed.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    const approve = await pageApi(gw.approvalUrl, '/calls/page-1/approve', {
      body: { inputHash: '0'.repeat(64) },
      token: false,
    });
    expect(approve.status).toBe(401);
    expect(gw.upstreamLog()).toEqual([]);
  });

  it('answers only requests addressed to its loopback address (no DNS rebinding)', async () => {
    const gw = await gateway();
    const url = new URL(gw.approvalUrl);
    expect(await rawGet(url, `evil.example:${url.port}`)).toBe(421);
    expect(await rawGet(url, url.host)).toBe(200);
  });

  it('takes another port when the configured one is in use, as a second gateway on one config would find it', async () => {
    const dir = scratch();
    const first = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, principal: 'ada', approvalPage: { port: 0 } },
    });
    const taken = Number(new URL(first.approvalUrl).port);
    const second = await startGateway({
      dir,
      config: { upstreams: { test: testUpstream(dir) }, principal: 'ada', approvalPage: { port: taken } },
    });
    expect(Number(new URL(second.approvalUrl).port)).not.toBe(taken);
    expect(second.stderr()).toContain(`port ${taken} is taken (by another gateway?)`);
    expect((await fetch(second.approvalUrl)).status).toBe(200);
  });
});
