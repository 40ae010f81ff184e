import { createRemoteGate } from '@toolgate/core/remote';
import { showRemoteParts, ToolGateProvider } from '@toolgate/react';
import '@toolgate/react/styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApprovalList } from './approval-list.tsx';
import './page.css';

/** What the gateway writes into the page: the session its calls are in, and where its API is. */
interface PageConfig {
  readonly session: string;
  readonly api: string;
}

const config = JSON.parse(document.getElementById('toolgate-config')?.textContent ?? '{}') as PageConfig;
const token = new URLSearchParams(location.search).get('token') ?? '';
// In the page's one script: the gateway serves only the files its HTML names, so a call's refusal,
// approvers and connection note cannot come in a chunk loaded later.
showRemoteParts();
const gate = createRemoteGate({
  url: config.api,
  session: config.session,
  tools: [],
  headers: { Authorization: `Bearer ${token}` },
});

const root = document.getElementById('root');
if (root !== null) {
  createRoot(root).render(
    <StrictMode>
      <ToolGateProvider gate={gate}>
        <ApprovalList connection={gate.connection} session={config.session} />
      </ToolGateProvider>
    </StrictMode>,
  );
}
