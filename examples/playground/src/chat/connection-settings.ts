/**
 * What the real-model form remembers between visits. The base URL and model name are kept in
 * localStorage; the API key only when the visitor ticks "Remember the key on this device",
 * otherwise it lives in memory and is gone on reload.
 */
export interface ConnectionSettings {
  readonly baseURL: string;
  readonly model: string;
  readonly apiKey: string;
  readonly rememberKey: boolean;
}

const KEY = 'toolgate-playground:connection';
const SECRET = 'toolgate-playground:api-key';

export const DEFAULT_SETTINGS: ConnectionSettings = {
  baseURL: 'http://127.0.0.1:11434/v1',
  model: 'llama3.1',
  apiKey: '',
  rememberKey: false,
};

export function loadSettings(): ConnectionSettings {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? '{}') as Partial<Record<keyof ConnectionSettings, unknown>>;
    const apiKey = localStorage.getItem(SECRET);
    return {
      baseURL: typeof saved.baseURL === 'string' ? saved.baseURL : DEFAULT_SETTINGS.baseURL,
      model: typeof saved.model === 'string' ? saved.model : DEFAULT_SETTINGS.model,
      apiKey: apiKey ?? '',
      rememberKey: apiKey !== null,
    };
  } catch {
    return DEFAULT_SETTINGS;
  }
}

export function saveSettings(settings: ConnectionSettings): void {
  try {
    localStorage.setItem(KEY, JSON.stringify({ baseURL: settings.baseURL, model: settings.model }));
    if (settings.rememberKey && settings.apiKey !== '') localStorage.setItem(SECRET, settings.apiKey);
    else localStorage.removeItem(SECRET);
  } catch {
    // Storage can be off (private windows); the settings still work for this visit.
  }
}
