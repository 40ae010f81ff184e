import { useCallback, useEffect, useRef, type RefObject, type UIEvent } from 'react';

/**
 * Keeps a scroll container at its bottom as content arrives, while the reader is there; once they
 * scroll up it leaves them alone. The scroll happens in the next animation frame, when the browser
 * lays the page out anyway, so a burst of updates never forces a layout per update.
 * Returns the container's `onScroll` handler.
 */
export function useFollowBottom(
  container: RefObject<HTMLElement | null>,
  content: unknown,
): (event: UIEvent<HTMLElement>) => void {
  const pinnedRef = useRef(true);
  // Where this hook last scrolled to: the scroll event that follows is ours, not the reader's,
  // even if more content has arrived in between.
  const ownTopRef = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (!pinnedRef.current) return;
    const frame = requestAnimationFrame(() => {
      const element = container.current;
      if (element === null) return;
      element.scrollTop = element.scrollHeight;
      ownTopRef.current = element.scrollTop;
    });
    return () => cancelAnimationFrame(frame);
  }, [container, content]);
  return useCallback((event: UIEvent<HTMLElement>) => {
    const element = event.currentTarget;
    if (ownTopRef.current !== undefined && Math.abs(element.scrollTop - ownTopRef.current) < 2) return;
    ownTopRef.current = undefined;
    pinnedRef.current = element.scrollHeight - element.scrollTop - element.clientHeight < 48;
  }, []);
}
