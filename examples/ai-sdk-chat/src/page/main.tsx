import '@toolgate/react/styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import Chat from './chat.tsx';
import './styles.css';

const root = document.getElementById('root');
if (root === null) throw new Error('index.html needs a #root element');
createRoot(root).render(
  <StrictMode>
    <Chat />
  </StrictMode>,
);
