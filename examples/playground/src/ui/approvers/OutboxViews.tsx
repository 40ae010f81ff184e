import type { ReactElement, ReactNode } from 'react';
import type { OutboxBlock, OutboxItem } from '../../chat/outbox-item.ts';

/** A Block Kit text object's words, or nothing where a block carries none. */
function textOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { text } = value as { text?: unknown };
  return typeof text === 'string' ? text : undefined;
}

/** Slack's three escapes undone, and its `<!date^…|fallback>` and `<url|label>` shown by their words. */
function plainOf(mrkdwn: string): string {
  return mrkdwn
    .replace(/<!date\^[^|>]*\|([^>]*)>/g, '$1')
    .replace(/<[^|>]+\|([^>]*)>/g, '$1')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/** Slack's `*bold*` and `` `code` `` as React elements; everything else stays text, never markup. */
function Mrkdwn({ text }: { text: string }): ReactElement {
  const parts = plainOf(text).split(/(\*[^*\n]+\*|`[^`\n]+`)/);
  return (
    <>
      {parts.map((part, at): ReactNode => {
        if (part.length > 2 && part.startsWith('*') && part.endsWith('*'))
          return <strong key={at}>{part.slice(1, -1)}</strong>;
        if (part.length > 2 && part.startsWith('`') && part.endsWith('`'))
          return <code key={at}>{part.slice(1, -1)}</code>;
        return part;
      })}
    </>
  );
}

/** The preformatted text of a `rich_text` block: the input, as the card shows it. */
function preformattedOf(block: OutboxBlock): string {
  const elements = Array.isArray(block.elements) ? (block.elements as unknown[]) : [];
  return elements
    .flatMap((element) => {
      const inner = (element as { elements?: unknown }).elements;
      return Array.isArray(inner) ? (inner as unknown[]) : [];
    })
    .map((piece) => textOf(piece) ?? '')
    .join('');
}

function Block({ block }: { block: OutboxBlock }): ReactElement | null {
  const elements = Array.isArray(block.elements) ? (block.elements as unknown[]) : [];
  switch (block.type) {
    case 'header':
      return (
        <p className="slack-header">
          <strong>{textOf(block.text)}</strong>
        </p>
      );
    case 'section': {
      const fields = Array.isArray(block.fields) ? (block.fields as unknown[]) : [];
      const text = textOf(block.text);
      return (
        <div className="slack-section">
          {text === undefined ? null : (
            <p>
              <Mrkdwn text={text} />
            </p>
          )}
          {fields.length === 0 ? null : (
            <ul className="slack-fields">
              {fields.map((field, at) => (
                <li key={at}>
                  <Mrkdwn text={textOf(field) ?? ''} />
                </li>
              ))}
            </ul>
          )}
        </div>
      );
    }
    case 'rich_text':
      return <pre className="slack-pre">{preformattedOf(block)}</pre>;
    case 'context':
      return (
        <p className="slack-context">
          {elements.map((element, at) => (
            <span key={at}>
              <Mrkdwn text={textOf(element) ?? ''} />{' '}
            </span>
          ))}
        </p>
      );
    case 'actions':
      // Drawn, never live: a vote is cast in Slack (or on the confirm page), not on this picture of it.
      return (
        <p className="slack-actions">
          {elements.map((element, at) => (
            <button key={at} type="button" disabled className="slack-button">
              {textOf((element as { text?: unknown }).text)} <span className="slack-where">in Slack</span>
            </button>
          ))}
        </p>
      );
    case 'divider':
      return <hr />;
    default:
      return null;
  }
}

/** The Slack card a Slack channel would post for the notice, drawn from its Block Kit blocks. */
export function SlackCardView({ item }: { item: OutboxItem }): ReactElement {
  return (
    <div className="slack-card" data-testid="outbox-slack" role="group" aria-label="Slack card">
      {item.slack.blocks.map((block, at) => (
        <Block key={at} block={block} />
      ))}
    </div>
  );
}

/**
 * The mail an email channel would send for the notice: its subject and its HTML in an iframe
 * sandboxed with no permissions at all, so nothing in it runs, and the plain text beside it.
 */
export function MailView({ item }: { item: OutboxItem }): ReactElement {
  return (
    <div className="mail-view" data-testid="outbox-mail" role="group" aria-label="Mail">
      <p className="mail-subject">
        <span>Subject:</span> <strong>{item.mail.subject}</strong>
      </p>
      <iframe className="mail-html" sandbox="" srcDoc={item.mail.html} title={`Mail: ${item.mail.subject}`} />
      <details className="mail-text">
        <summary>Plain text</summary>
        <pre className="outbox-input">{item.mail.text}</pre>
      </details>
    </div>
  );
}
