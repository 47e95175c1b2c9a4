/** What a watch follows: every lot of a VIN, or one auction lot. */
export type WatchTarget = { kind: 'vin'; vin: string } | { kind: 'lot'; auction: string; lotId: number };

export interface Watch {
  id: string;
  accountId: string;
  /** Set for a VIN watch; null for a lot watch. */
  vin: string | null;
  /** Set for a lot watch; null for a VIN watch. */
  auction: string | null;
  lotId: number | null;
  createdAt: string;
}

/** A page of a list and where the next one starts (an opaque cursor), or null at the end. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Position in a list ordered newest first by (created_at, id): both, so that ties page exactly. */
export interface PagePosition {
  createdAt: string;
  id: string;
}

/** Cursors are opaque to clients: base64url of the position, so that their shape can change. */
export function encodeCursor(position: PagePosition): string {
  return Buffer.from(`${position.createdAt}|${position.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or null when it is not one of ours. */
export function decodeCursor(cursor: string): PagePosition | null {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|([a-z]+_[0-9a-z]{16})$/.exec(text);
  return match ? { createdAt: match[1]!, id: match[2]! } : null;
}
