import { createRemoteGate } from '@toolgate/core/remote';
import { ToolGateProvider } from '@toolgate/react';
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
