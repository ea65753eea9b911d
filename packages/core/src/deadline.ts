/**
 * A signal that aborts when `parent` does or after `ms`, whichever comes first; `clear()` stops the timer once the
 * work is over. Instead of `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: a composite follows its sources
 * only weakly, and Node may collect the timeout signal before it fires (nodejs/node#57736), leaving a request with
 * no deadline at all. Here the timer holds the controller strongly for exactly as long as it runs.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  clear(): void;
}

export function deadlineSignal(parent: AbortSignal | undefined, ms: number): Deadline {
  const controller = new AbortController();
  const onParentAbort = () => {
    clearTimeout(timer);
    controller.abort(parent?.reason);
  };
  const timer = setTimeout(() => {
    parent?.removeEventListener('abort', onParentAbort);
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, ms);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
