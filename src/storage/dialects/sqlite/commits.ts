import { CompiledQuery, type Kysely, type Transaction } from 'kysely';

/** The most units one group commit takes: bounds how long one transaction holds the writer. */
const MAX_GROUP_COMMIT = 64;
const SAVEPOINT = CompiledQuery.raw('savepoint unit');
const RELEASE_SAVEPOINT = CompiledQuery.raw('release savepoint unit');
const ROLLBACK_TO_SAVEPOINT = CompiledQuery.raw('rollback to savepoint unit');

interface Pending<I, R> {
  input: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit, for SQLite: one writer, where each COMMIT costs more than the statements of a
 * unit of work. The units that arrive while a transaction runs wait for the next one and commit
 * together, each inside a savepoint of its own, so every unit is still all-or-nothing and a
 * failing one takes no other with it. Their answers are given only after the COMMIT. With no
 * concurrency a batch is one unit, with no added wait.
 */
export class GroupCommit<DB, I, R> {
  private readonly pending: Pending<I, R>[] = [];
  private flushing = false;

  constructor(
    private readonly kysely: Kysely<DB>,
    private readonly work: (trx: Transaction<DB>, input: I) => Promise<R>,
  ) {}

  commit(input: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_GROUP_COMMIT);
        const outcomes: ({ ok: true; result: R } | { ok: false; error: unknown })[] = [];
        try {
          await this.kysely.transaction().execute(async (trx) => {
            for (const item of batch) {
              await trx.executeQuery(SAVEPOINT);
              try {
                outcomes.push({ ok: true, result: await this.work(trx, item.input) });
                await trx.executeQuery(RELEASE_SAVEPOINT);
              } catch (error) {
                await trx.executeQuery(ROLLBACK_TO_SAVEPOINT);
                await trx.executeQuery(RELEASE_SAVEPOINT);
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          for (const item of batch) item.reject(error);
          continue;
        }
        batch.forEach((item, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) item.resolve(outcome.result);
          else item.reject(outcome.error);
        });
      }
    } finally {
      this.flushing = false;
    }
  }
}
