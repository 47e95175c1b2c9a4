import { photoArchiveQueue } from './media/archive-queue.ts';
import type { LotsWrittenHook } from './storage/repositories/lots-written.ts';
import { lotEvents } from './webhooks/lot-events.ts';

/**
 * The rooms that take part in an import's transaction (storage/repositories/lots-written.ts), in
 * order: with the photo archive on, its queue of the lots' photos (media/archive-queue.ts); always,
 * the watched lots' webhook events (webhooks/lot-events.ts). Apart from the container so that a
 * thread that stores lots on a connection of its own (ingest/worker/) wires the same ones.
 */
export function lotsWrittenHooks(options: { photoArchive: boolean }): LotsWrittenHook[] {
  return [...(options.photoArchive ? [photoArchiveQueue] : []), lotEvents];
}
