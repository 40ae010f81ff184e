import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './ui/App.tsx';
import './styles.css';

const root = document.getElementById('root');
if (root === null)
  throw new Error('index.html must have an element with id "root" for the playground to mount in.');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
