import type { MailQueueSummary, MailStatus, QueuedMail } from '../../domain/mail.ts';
import type { MailQueueRepository } from '../../storage/repositories/mail-queue-repository.ts';
import type { MailToQueue } from './messages.ts';

/**
 * Where account mail goes first. A request queues its message in the database and answers; the
 * delivery worker (mail-delivery-worker.ts) sends it afterwards. Queuing is one insert whatever
 * the message, so an answer takes the same time whatever the mail (or the SMTP server) does, and a
 * queued message survives a restart or an SMTP outage.
 */
export class MailQueue {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly repository: MailQueueRepository) {}

  async enqueue(mail: MailToQueue, now: Date): Promise<string> {
    const id = await this.repository.enqueue(mail, now);
    this.queuedElsewhere();
    return id;
  }

  /**
   * Wakes this process's worker for messages queued through a transaction's own repositories (the
   * billing mail sweep queues a message with the notice that decides it); call it after the commit.
   */
  queuedElsewhere(): void {
    // This instance's worker wakes now; those of other instances find it at their next poll.
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` after each message queued in this process; returns the unsubscription. */
  onQueued(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  summary(): Promise<MailQueueSummary> {
    return this.repository.summary();
  }

  list(filter: MailStatus | 'retrying', limit: number): Promise<QueuedMail[]> {
    return this.repository.list(filter, limit);
  }
}
