import { ToolCallStatus, ToolCallStatusLabel } from '@toolgate/react';
import { memo, useLayoutEffect, useRef, useState, type ReactElement } from 'react';

/** Chip size and spacing, in pixels; the stylesheet's `.call-chip` matches. */
const CHIP_WIDTH = 172;
const CHIP_HEIGHT = 26;
const GAP = 6;
const ROW = CHIP_HEIGHT + GAP;
/** The grid's height, as set in the stylesheet. */
const VIEW = 288;
/** Rows rendered above and below the visible ones. */
const OVERSCAN = 3;

/**
 * A turn with many calls, as a scrollable grid of compact `<ToolCallStatus>` chips. Only the rows
 * in view are mounted: two hundred calls settling at once re-render and lay out a few dozen chips,
 * not two hundred. Each chip carries its position in the whole turn for assistive technology.
 */
export function CallGrid({ ids }: { ids: readonly string[] }): ReactElement {
  const grid = useRef<HTMLUListElement>(null);
  const [columns, setColumns] = useState(3);
  const [scrollTop, setScrollTop] = useState(0);

  useLayoutEffect(() => {
    const element = grid.current;
    if (element === null) return;
    const measure = () =>
      setColumns(Math.max(1, Math.floor((element.clientWidth - 2 * GAP + GAP) / (CHIP_WIDTH + GAP))));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const rows = Math.ceil(ids.length / columns);
  const firstRow = Math.max(0, Math.floor(scrollTop / ROW) - OVERSCAN);
  const lastRow = Math.min(rows, Math.ceil((scrollTop + VIEW) / ROW) + OVERSCAN);
  const shown: ReactElement[] = [];
  for (let index = firstRow * columns; index < Math.min(ids.length, lastRow * columns); index++) {
    const id = ids[index] as string;
    shown.push(
      <CallChip
        key={id}
        id={id}
        position={index}
        total={ids.length}
        row={Math.floor(index / columns)}
        column={index % columns}
      />,
    );
  }

  return (
    <ul
      className="call-grid"
      ref={grid}
      tabIndex={0}
      aria-label={`${ids.length} tool calls`}
      data-testid="call-grid"
      onScroll={(event) => setScrollTop(event.currentTarget.scrollTop)}
    >
      <li className="call-grid-spacer" aria-hidden="true" style={{ height: rows * ROW - GAP }} />
      {shown}
    </ul>
  );
}

// One element for every chip, so that `<ToolCallStatus>` (memoised) sees the same children each time.
const LABEL_ONLY = <ToolCallStatusLabel />;

const CallChip = memo(function CallChip({
  id,
  position,
  total,
  row,
  column,
}: {
  id: string;
  position: number;
  total: number;
  row: number;
  column: number;
}): ReactElement {
  return (
    <li
      className="call-chip"
      data-testid="tool-call"
      data-call-id={id}
      aria-posinset={position + 1}
      aria-setsize={total}
      style={{ top: row * ROW, left: column * (CHIP_WIDTH + GAP) }}
    >
      <ToolCallStatus id={id} className="call-status compact">
        {LABEL_ONLY}
      </ToolCallStatus>
    </li>
  );
});
