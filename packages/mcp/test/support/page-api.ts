import { inputHash } from '@toolgate/server';

/** A request to the approval page's API, with the page's token unless `token: false`. */
export async function pageApi(
  approvalUrl: string,
  path: string,
  init: { method?: string; body?: unknown; token?: boolean } = {},
): Promise<Response> {
  const page = new URL(approvalUrl);
  const token = page.searchParams.get('token') ?? '';
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (init.token !== false) headers['Authorization'] = `Bearer ${token}`;
  return fetch(new URL(`/api/toolgate${path}`, page.origin), {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
}

/** The session's calls as the page sees them. */
export async function pageCalls(
  approvalUrl: string,
  session: string,
): Promise<{ id: string; status: string; input?: unknown; name: string }[]> {
  const response = await pageApi(approvalUrl, `/sessions/${encodeURIComponent(session)}/calls`);
  if (!response.ok) throw new Error(`the page answered ${response.status}: ${await response.text()}`);
  return (
    (await response.json()) as { calls: { id: string; status: string; input?: unknown; name: string }[] }
  ).calls;
}

/** Approves a call on the page, bound to the hash of `input` (what the person was shown). */
export async function approveOnPage(approvalUrl: string, id: string, input: unknown): Promise<Response> {
  return pageApi(approvalUrl, `/calls/${encodeURIComponent(id)}/approve`, {
    body: { inputHash: await inputHash(input) },
  });
}
