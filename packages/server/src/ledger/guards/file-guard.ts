import { renameSync, statSync, type Stats } from 'node:fs';

/**
 * Watches that a SQLite ledger's path still leads to the file it opened.
 *
 * In WAL mode SQLite keeps writing to a file that was removed or replaced without an error, and
 * its `-wal` and `-shm` stay beside the path: the next connection to open whatever is at the path
 * then (a file put in its place, a backup restored with `mv`) replays the old file's log into it,
 * and the replacement is lost. SQLite itself leaves them there on close once the file has moved.
 * So the guard checks the path before each transaction (and every `pollMs`, and on close); once it
 * leads elsewhere, the ledger refuses every read and write, and its own `-wal` and `-shm` (the ones
 * it opened, by device and inode; never a log that came with the replacement) are moved aside as
 * `<path>-wal.moved-<inode>` and `<path>-shm.moved-<inode>`. The old file's last commits are in
 * that log: beside the old file, renamed `<old>-wal`, it opens whole.
 *
 * @example
 * const guard = fileGuard('./toolgate.db');
 * guard.opened(); // once the database is open in WAL mode
 * guard.check();  // before each transaction: throws SQLITE_READONLY_DBMOVED once the file is gone
 */
export interface FileGuard {
  /** Notes the `-wal` and `-shm` the connection uses, once they exist. */
  readonly opened: () => void;
  /** Throws (`SQLITE_READONLY_DBMOVED`) when the path no longer leads to the file opened. */
  readonly check: () => void;
  /** Throws when the file was found gone before, without looking again (for reads). */
  readonly refused: () => void;
}

const SIDE_FILES = ['-wal', '-shm'] as const;

/**
 * Makes the guard of the file at `path`, as it is now.
 *
 * @example
 * const guard = fileGuard(options.path);
 */
export function fileGuard(path: string): FileGuard {
  const file = statSync(path);
  const sides = new Map<string, Stats>();
  let gone = false;
  const moved = () =>
    Object.assign(new Error(`${path} is no longer the file the ledger opened`), {
      code: 'SQLITE_READONLY_DBMOVED',
    });

  const setAside = () => {
    for (const [name, opened] of sides) {
      const now = statOrNothing(name);
      if (now === undefined || !same(now, opened)) continue;
      try {
        renameSync(name, `${name}.moved-${String(file.ino)}`);
      } catch {
        // The directory went with it: nothing is left at the path to take the log.
      }
    }
  };

  return {
    opened() {
      for (const suffix of SIDE_FILES) {
        const found = statOrNothing(path + suffix);
        if (found !== undefined) sides.set(path + suffix, found);
      }
    },
    check() {
      if (gone) throw moved();
      const now = statOrNothing(path);
      if (now !== undefined && same(now, file)) return;
      gone = true;
      setAside();
      throw moved();
    },
    refused() {
      if (gone) throw moved();
    },
  };
}

function statOrNothing(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function same(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev;
}
