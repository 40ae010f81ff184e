import { useId, useState, type FormEvent, type ReactElement } from 'react';
import { MESSAGE_LIMIT } from '../chat/transcript.ts';

/** The count is shown from here on, so that the limit is in sight before it is reached. */
const COUNT_FROM = MESSAGE_LIMIT - 500;

const count = (value: number) => value.toLocaleString('en-US');

/**
 * The message box. Enter sends, Shift+Enter starts a new line; while the model works, Stop replaces
 * Send. A message over the server's limit stays in the box with the count and what to remove; a
 * message the server refuses comes back to the box with the server's reason.
 */
export function Composer({
  busy,
  onSend,
  onStop,
  placeholder,
}: {
  busy: boolean;
  onSend: (text: string) => Promise<void>;
  onStop: () => void;
  placeholder: string;
}): ReactElement {
  const [text, setText] = useState('');
  const [refused, setRefused] = useState<string>();
  const id = useId();
  const length = text.trim().length;
  const over = length - MESSAGE_LIMIT;
  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const message = text.trim();
    if (message === '' || busy || over > 0) return;
    setText('');
    setRefused(undefined);
    onSend(message).catch((error: unknown) => {
      // Back into the box, unless something new has been typed there since.
      setText((now) => (now === '' ? message : now));
      setRefused(`Not sent: ${error instanceof Error ? error.message : String(error)}`);
    });
  };
  const described = [
    length >= COUNT_FROM ? `${id}-count` : '',
    over > 0 ? `${id}-limit` : '',
    refused === undefined ? '' : `${id}-error`,
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <form className="composer" onSubmit={submit}>
      <div className="composer-field">
        <label htmlFor="composer-input" className="visually-hidden">
          Message
        </label>
        <textarea
          id="composer-input"
          rows={2}
          value={text}
          placeholder={placeholder}
          aria-invalid={over > 0 ? true : undefined}
          aria-describedby={described === '' ? undefined : described}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) submit(event);
          }}
        />
        {/* The server's refusal follows a press, so it is announced; the limit is the field's own
            state, read with the field (aria-invalid, aria-describedby), not on every key. */}
        <div className="composer-notes">
          <div role="alert">
            {refused === undefined ? null : (
              <p id={`${id}-error`} className="composer-note error" data-testid="composer-error">
                {refused}
              </p>
            )}
          </div>
          {over > 0 ? (
            <p id={`${id}-limit`} className="composer-note error" data-testid="composer-limit">
              Messages can be at most {count(MESSAGE_LIMIT)} characters: remove {count(over)} to send this
              one.
            </p>
          ) : null}
          {length >= COUNT_FROM ? (
            <p
              id={`${id}-count`}
              className="composer-count"
              data-testid="composer-count"
              data-over={over > 0}
            >
              {count(length)} / {count(MESSAGE_LIMIT)}
            </p>
          ) : null}
        </div>
      </div>
      {busy ? (
        <button type="button" className="button danger" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="button primary" disabled={text.trim() === '' || over > 0}>
          Send
        </button>
      )}
    </form>
  );
}
