import type { ExecutionScope } from '../pipeline-host.ts';
import type { ToolContext } from '../../tool/tool.ts';

/**
 * One run of a tool as the pipeline sees it: `opening` while the keeper prepares it, `running`
 * while the tool works, `taken` once its result went to the keeper's commit, `ended` when it will
 * not commit. Its AbortController is made on first use of `signal`: most tools never read it, and
 * making one per call is measurable in a long chat. The tool never sees this object, only a
 * context that reads the signal from it, so it cannot end its own run or hide from a stop.
 *
 * @example
 * const run = new Run();
 * run.abort(new DOMException('stop', 'AbortError'));
 * run.signal().aborted; // true
 */
export class Run {
  /** `reconciling`: the tool's run ended in doubt, and its `reconcile` is being asked what happened. */
  stage: 'opening' | 'running' | 'reconciling' | 'taken' | 'ended' = 'opening';
  scope: ExecutionScope | undefined = undefined;
  timer: unknown = undefined;
  /** The signal of the `reconcile` being asked, aborted with the run (a stop, a lost claim) or at its own deadline. */
  asking: AbortController | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  #abortReason: DOMException | undefined = undefined;

  signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortReason !== undefined) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  abort(reason: DOMException): void {
    this.asking?.abort(reason);
    if (this.#abortReason !== undefined) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * What a tool receives beside its input. It reads the signal from its run but holds nothing the
 * pipeline acts on: whatever a tool writes to its context changes only its own view of it.
 *
 * @example
 * tool.execute(input, new RunContext(run, call.id, tool.name, scope.context));
 */
export class RunContext implements ToolContext {
  readonly call: { readonly id: string; readonly name: string };
  readonly idempotencyKey: string;
  readonly transaction: unknown;
  readonly #run: Run;

  constructor(run: Run, id: string, name: string, extra: Partial<ToolContext> | undefined) {
    this.#run = run;
    this.call = { id, name };
    this.idempotencyKey = extra?.idempotencyKey ?? id;
    this.transaction = extra?.transaction;
  }

  get signal(): AbortSignal {
    return this.#run.signal();
  }
}
