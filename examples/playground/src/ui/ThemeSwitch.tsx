import { useEffect, useState, type ReactElement } from 'react';

type Theme = 'system' | 'light' | 'dark';
const KEY = 'toolgate-playground:theme';

function savedTheme(): Theme {
  try {
    const saved = localStorage.getItem(KEY);
    return saved === 'light' || saved === 'dark' ? saved : 'system';
  } catch {
    return 'system';
  }
}

/** System, light or dark; the choice is remembered. */
export function ThemeSwitch(): ReactElement {
  const [theme, setTheme] = useState(savedTheme);
  useEffect(() => {
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    try {
      if (theme === 'system') localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, theme);
    } catch {
      // Storage can be off; the theme still applies to this visit.
    }
  }, [theme]);
  return (
    <fieldset className="segmented">
      <legend className="visually-hidden">Theme</legend>
      {(['system', 'light', 'dark'] as const).map((option) => (
        <label key={option}>
          <input
            type="radio"
            name="theme"
            value={option}
            checked={theme === option}
            onChange={() => setTheme(option)}
          />
          <span>{option[0]?.toUpperCase() + option.slice(1)}</span>
        </label>
      ))}
    </fieldset>
  );
}
