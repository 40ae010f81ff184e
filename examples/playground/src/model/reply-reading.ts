import type { ToolReply } from './scenarios.ts';

/**
 * Why a call did not commit, in words for the visitor, read from the tool message the gate wrote:
 * the reason itself (each refused value, an app's refusal such as "the wallet holds only $100.00",
 * a tool's error) and what happened as a result, said once. The message's "Error:" heading and
 * its advice to the model are left out.
 *
 * @example
 * whyNot(reply); // 'amount_cents must be >= 1 (got integer -2000). Nothing was run.'
 */
export function whyNot(reply: ToolReply): string {
  const lines = reply.content.split('\n');
  const head = lines[0] ?? '';
  if (/ was rejected \(/.test(head)) {
    const issues = lines
      .filter((line) => line.startsWith('- '))
      .map((line) =>
        line
          .slice(2)
          .replace(/^\/?([^:]*): /, (_all, path: string) =>
            path === '' || path === '(arguments)' ? '' : `${path.replaceAll('/', '.')} `,
          ),
      );
    const why = issues.length > 0 ? issues.join('; ') : (lines[1] ?? reply.code ?? 'it was refused');
    return `${sentence(why)} Nothing was run.`;
  }
  const settled =
    / was cancelled \([a-z_]+\): (.*)\. Nothing was changed\./.exec(head) ??
    / failed \([a-z_]+\): (.*?)\. Nothing was changed\./.exec(head);
  if (settled?.[1] !== undefined) return `${sentence(settled[1])} Nothing was changed.`;
  const interrupted =
    / failed \(interrupted\): (.*?)(?:\. It may or may not have taken effect)?\. Check before calling /.exec(
      head,
    );
  // The answer already says it cannot tell whether the call took effect: the reason's own
  // "may or may not" would say it a second time.
  if (interrupted?.[1] !== undefined)
    return sentence(interrupted[1].replace(/[;,]?\s*it may or may not have taken effect$/i, ''));
  return sentence(head.replace(/^Error: /, ''));
}

/**
 * The answer about a call that did not commit: "The transfer did not go through: <why>", or, when
 * the call was cut off while it ran (`interrupted`), that it may have happened, said once, and
 * what to check.
 *
 * @example
 * didNotGoThrough('transfer', reply, 'Check the wallet before you try again.');
 */
export function didNotGoThrough(
  subject: string,
  reply: ToolReply,
  check = 'Check before you try again.',
): string {
  return reply.code === 'interrupted'
    ? `I can't tell whether the ${subject} went through: ${whyNot(reply)} ${check}`
    : `The ${subject} did not go through: ${whyNot(reply)}`;
}

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
