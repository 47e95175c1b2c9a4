import type { Db } from '../database.ts';
import type { OperatorAuditTable } from '../schema.ts';
import { newSortableId } from '../../domain/ids.ts';
import type { AuditAction, AuditEntry, NewAuditEntry } from '../../domain/operations.ts';

function toEntry(row: OperatorAuditTable): AuditEntry {
  return { id: row.id, at: row.at, actor: row.actor, action: row.action as AuditAction, target: row.target, details: JSON.parse(row.details) as Record<string, unknown> };
}

/** The operators' audit log (0015): appended to, read newest first; never changed. */
export class OperatorAuditRepository {
  constructor(private readonly db: Db) {}

  async record(entry: NewAuditEntry, now = new Date()): Promise<AuditEntry> {
    const row: OperatorAuditTable = {
      id: newSortableId('aud', now.getTime()),
      at: now.toISOString(),
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      details: JSON.stringify(entry.details),
    };
    await this.db.kysely.insertInto('operator_audit').values(row).execute();
    return toEntry(row);
  }

  /** Newest first; `before` is the id of the last entry of the previous page; `target` keeps one target's entries. */
  async page(options: { limit: number; before?: string; target?: string }): Promise<AuditEntry[]> {
    let query = this.db.kysely.selectFrom('operator_audit').selectAll();
    if (options.before !== undefined) query = query.where('id', '<', options.before);
    if (options.target !== undefined) query = query.where('target', '=', options.target);
    const rows = await query.orderBy('id', 'desc').limit(options.limit).execute();
    return rows.map(toEntry);
  }
}
