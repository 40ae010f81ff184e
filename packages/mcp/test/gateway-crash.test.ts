import { describe, expect, it } from 'vitest';
import { startGateway, testUpstream, scratch, textOf, waitFor } from './support/gateway.ts';

describe('the gateway killed in the middle of a call', () => {
  it('after a restart answers the same call id as the ledger recovered it: interrupted, never run again', async () => {
    const dir = scratch();
    const config = {
      upstreams: { test: testUpstream(dir) },
      tools: { slow: { approval: 'never' } },
      principal: 'ada',
      leaseMs: 1000,
    };
    const first = await startGateway({ dir, config });
    const lost = first.client.callTool({
      name: 'slow',
      arguments: { steps: 0 },
      _meta: { 'toolgate/callId': 'crash-1' },
    });
    lost.catch(() => undefined);
    await waitFor(() => first.upstreamLog().some((line) => line.startsWith('slow started')));
    process.kill(first.pid() ?? 0, 'SIGKILL');
    await expect(lost).rejects.toThrow();

    const second = await startGateway({ dir, config });
    const answer = await second.client.callTool({
      name: 'slow',
      arguments: { steps: 0 },
      _meta: { 'toolgate/callId': 'crash-1' },
    });
    expect(answer._meta).toMatchObject({ 'toolgate/status': 'failed', 'toolgate/reason': 'interrupted' });
    expect(textOf(answer)).toContain('may or may not have taken effect');
    expect(textOf(answer).match(/may or may not/gi)).toHaveLength(1);
    expect(second.upstreamLog().filter((line) => line.startsWith('slow started'))).toHaveLength(1);
  });
});
