import { useCallback, useEffect, useRef, type RefObject, type UIEvent } from 'react';

/**
 * Keeps a scroll container at its bottom as content arrives, while the reader is there; once they
 * scroll up it leaves them alone. The scroll happens in the next animation frame, when the browser
 * lays the page out anyway, so a burst of updates never forces a layout per update.
 * Returns the container's `onScroll` handler.
 */
export function useFollowBottom(container: RefObject<HTMLElement | null>, content: unknown): (event: UIEvent<HTMLElement>) => void {
  const pinnedRef = useRef(true);
  useEffect(() => {
    if (!pinnedRef.current) return;
    const frame = requestAnimationFrame(() => {
      const element = container.current;
      if (element !== null) element.scrollTop = element.scrollHeight;
    });
    return () => cancelAnimationFrame(frame);
  }, [container, content]);
  return useCallback((event: UIEvent<HTMLElement>) => {
    const element = event.currentTarget;
    pinnedRef.current = element.scrollHeight - element.scrollTop - element.clientHeight < 48;
  }, []);
}
