/**
 * Reads by key that are asked for in one turn of the event loop, made in one statement: on
 * PostgreSQL each statement is a round trip to a backend (a write, a wake-up, a read on each
 * side), and the searches answered by one read of the rate limiter's replies all ask for their
 * lots at once. A read waits for nothing but the end of the current turn (setImmediate).
 */
export class BatchedReads<Row> {
  private pending = new Map<string, { resolve: (rows: Row[]) => void; reject: (error: unknown) => void }[]>();

  constructor(
    /** One statement for every key asked for: their rows, in any order. */
    private readonly readAll: (keys: string[]) => Promise<Row[]>,
    private readonly keyOf: (row: Row) => string,
  ) {}

  read(key: string): Promise<Row[]> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => void this.flush());
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    let rows: Row[];
    try {
      rows = await this.readAll([...batch.keys()]);
    } catch (error) {
      for (const waiting of batch.values()) for (const { reject } of waiting) reject(error);
      return;
    }
    const byKey = new Map<string, Row[]>();
    for (const row of rows) {
      const key = this.keyOf(row);
      const list = byKey.get(key);
      if (list) list.push(row);
      else byKey.set(key, [row]);
    }
    // Each waiting read gets an array of its own: callers may sort or change it.
    for (const [key, waiting] of batch) for (const { resolve } of waiting) resolve([...(byKey.get(key) ?? [])]);
  }
}
