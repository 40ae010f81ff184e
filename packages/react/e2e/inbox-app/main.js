// An approver's page, as the README shows it: the signed-in principal's inbox, followed live from
// the server gate that mounted toolgateHandler at /api/toolgate. Who is signed in comes from `?as=`.
import { createRemoteGate } from '@toolgate/core/remote';
import { ApprovalInbox, ToolGateProvider } from '@toolgate/react';
import '@toolgate/react/styles.css';
import { createElement as h, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

const principal = new URLSearchParams(location.search).get('as') ?? '';
const gate = createRemoteGate({
  baseUrl: '/api/toolgate',
  inbox: true,
  headers: { Authorization: `Bearer ${principal}` },
});

createRoot(document.getElementById('root')).render(
  h(StrictMode, null, h(ToolGateProvider, { gate }, h('h1', null, 'Approvals'), h(ApprovalInbox))),
);
