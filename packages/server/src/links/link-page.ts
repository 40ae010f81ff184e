import { createHash } from 'node:crypto';
import type { ToolCallRecord } from '@toolgate/core';
import { hashInput } from '../keeper/row-columns.ts';
import type { LinkClaims } from './approval-links.ts';

// The confirm page of an approval link: server-rendered HTML that works without JavaScript, every
// value escaped, styled by one inline stylesheet the Content-Security-Policy allows by its hash.

const STYLE = `
:root { color-scheme: light; }
body { margin: 0; background: #ffffff; color: #1a1a1a; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
main { max-width: 46rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
h2 { font-size: 1.125rem; margin: 1.5rem 0 0.5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #f3f3f3; border: 1px solid #8a8a8a; padding: 0.75rem; white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
code { font: 0.9375rem/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
.digest { overflow-wrap: anywhere; }
.notice { border-left: 4px solid #1a1a1a; padding: 0.5rem 0.75rem; background: #f3f3f3; }
form { margin: 1rem 0 0; }
label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
textarea { display: block; width: 100%; box-sizing: border-box; min-height: 4.5rem; font: inherit; color: #1a1a1a; background: #ffffff; border: 1px solid #595959; padding: 0.5rem; }
button { font: inherit; font-weight: 600; border: 0; border-radius: 4px; padding: 0.625rem 1.25rem; cursor: pointer; color: #ffffff; }
button.approve { background: #0b6b2e; }
button.deny { background: #a3191f; margin-top: 0.5rem; }
:focus-visible { outline: 3px solid #1a4fd6; outline-offset: 2px; }
`;

/**
 * The headers every link page goes out with: HTML, never stored or sent on as a referrer (the
 * URL is a credential), never indexed or framed, and a policy that allows no script at all.
 *
 * @example
 * new Response(html, { status: 200, headers: PAGE_HEADERS });
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex, nofollow',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': [
    "default-src 'none'",
    `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
};

/**
 * Escapes text for HTML element content and quoted attribute values.
 *
 * @example
 * escapeHtml('<b>"x"</b>'); // '&lt;b&gt;&quot;x&quot;&lt;/b&gt;'
 */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

function document(title: string, body: string): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex, nofollow">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main></body></html>\n`
  );
}

function time(at: number): string {
  const date = new Date(at);
  return `<time datetime="${date.toISOString()}">${escapeHtml(date.toUTCString())}</time>`;
}

/**
 * What the page says of a call: the tool, the whole input (pretty-printed, never cut), its
 * digest, who asks, who the link is for, and when it expires.
 */
function callDetails(call: ToolCallRecord, claims: LinkClaims): string {
  const approval = call.approval;
  // A tool without approvers records no requester: its call is its session owner's to decide.
  const asker = approval?.from?.principal;
  const onBehalfOf = approval?.from?.onBehalfOf ?? call.onBehalfOf;
  const rows: [string, string][] = [
    ['Tool', `<code>${escapeHtml(call.name)}</code>`],
    ...(asker === undefined ? [] : [['Asked by', escapeHtml(asker)] as [string, string]]),
    ...(onBehalfOf === undefined ? [] : [['On behalf of', escapeHtml(onBehalfOf)] as [string, string]]),
    ['This link is for', escapeHtml(claims.principal)],
    ['Link expires', time(claims.expiry)],
    ['Call', `<code>${escapeHtml(call.id)}</code>`],
    ['Status', escapeHtml(call.status.replace('_', ' '))],
  ];
  if (approval !== undefined && approval.required > 1) {
    const by = approval.approvedBy.map((vote) => vote.principal);
    rows.push([
      'Approvals',
      escapeHtml(
        `${approval.required - approval.left} of ${approval.required}` +
          (by.length === 0 ? '' : ` (approved by ${by.join(', ')})`),
      ),
    ]);
  }
  const input = JSON.stringify(call.input, null, 2) ?? 'null';
  return (
    `<dl>${rows.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join('')}</dl>` +
    `<h2>Input</h2><pre><code>${escapeHtml(input)}</code></pre>` +
    `<h2>SHA-256 of the input</h2><p><code class="digest">${hashInput(call.input)}</code></p>`
  );
}

function decisionForms(call: ToolCallRecord): string {
  const id = escapeHtml(call.id);
  return (
    `<h2>Your decision</h2>` +
    `<form method="post"><input type="hidden" name="callId" value="${id}">` +
    `<input type="hidden" name="vote" value="approve">` +
    `<button type="submit" class="approve">Approve</button></form>` +
    `<form method="post"><input type="hidden" name="callId" value="${id}">` +
    `<input type="hidden" name="vote" value="deny">` +
    `<label for="reason">Reason for denying (optional)</label>` +
    `<textarea id="reason" name="reason" maxlength="2000"></textarea>` +
    `<button type="submit" class="deny">Deny</button></form>`
  );
}

/**
 * The page a link opens: the call as it stands, with Approve and Deny forms when `open`, or the
 * sentence that says why there is nothing to decide.
 *
 * @example
 * const html = callPage(call, claims, { open: true });
 */
export function callPage(
  call: ToolCallRecord,
  claims: LinkClaims,
  state: { readonly open: true } | { readonly open: false; readonly why: string },
): string {
  const title = `Approve ${call.name}?`;
  return document(
    title,
    `<h1>${escapeHtml(title)}</h1>` +
      (state.open ? '' : `<p class="notice" role="status">${escapeHtml(state.why)}</p>`) +
      callDetails(call, claims) +
      (state.open ? decisionForms(call) : ''),
  );
}

/**
 * The page a vote answers: what was decided, or why it was refused, and the call when known.
 *
 * @example
 * const html = answerPage('Approved', 'The call runs now.', call, claims);
 */
export function answerPage(
  title: string,
  sentence: string,
  call?: ToolCallRecord,
  claims?: LinkClaims,
): string {
  return document(
    title,
    `<h1>${escapeHtml(title)}</h1><p class="notice" role="status">${escapeHtml(sentence)}</p>` +
      (call === undefined || claims === undefined || call.input === undefined
        ? ''
        : callDetails(call, claims)),
  );
}
