import { LISTING_FIELD, type LotVersion } from '../../domain/lot-history.ts';
import type { LotHistory } from '../../history/lot-history.ts';
import { cleanText, isoInstant } from '../format.ts';
import type { GlossaryCategory, Translator } from './i18n.ts';

/** One version of a lot on the page: when, from what, and what it changed, in words. */
export interface HistoryEntryView {
  date: string;
  datetime: string | null;
  source: string;
  /** The first version: the lot as first seen (its values are the lot's details below it). */
  first: boolean;
  changes: string[];
}

/** A lot's history on the report page and in its PDF (contract, "Lot history"). */
export interface HistoryView {
  title: string;
  /** "From Copart sales data, seen Nov 3 – Nov 24". */
  provenance: string;
  entries: HistoryEntryView[];
  /** Said when the lot has not changed since it was first seen. */
  unchanged: string | null;
}

/** The fields a page reader is shown the changes of, in this order, with how each value is written. */
const SHOWN: readonly { field: string; label: string; glossary?: GlossaryCategory; kind: 'money' | 'miles' | 'date' | 'text' }[] = [
  { field: 'price', label: 'figure.price', kind: 'money' },
  { field: 'sale_date', label: 'history.saleDate', kind: 'date' },
  { field: 'odometer', label: 'figure.odometer', kind: 'miles' },
  { field: 'primary_damage', label: 'field.primaryDamage', glossary: 'damage', kind: 'text' },
  { field: 'secondary_damage', label: 'field.secondaryDamage', glossary: 'damage', kind: 'text' },
  { field: 'document', label: 'field.document', glossary: 'document', kind: 'text' },
];

function valueText(t: Translator, kind: (typeof SHOWN)[number]['kind'], glossary: GlossaryCategory | undefined, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (kind === 'money') return typeof value === 'number' ? t.formatMoney(value) : null;
  if (kind === 'miles') return typeof value === 'number' ? t.formatMiles(value) : null;
  if (kind === 'date') return typeof value === 'string' ? t.formatDate(value) : null;
  const text = typeof value === 'string' ? cleanText(value) : null;
  if (text === null) return null;
  return glossary ? (t.term(glossary, text)?.text ?? text) : text;
}

/** What one later version changed, in the reader's words: the shown fields, the photos, the listing. */
function changesOf(version: LotVersion, t: Translator): string[] {
  const lines: string[] = [];
  for (const shown of SHOWN) {
    const change = version.changed[shown.field];
    if (!change) continue;
    const field = t.t(shown.label);
    const from = valueText(t, shown.kind, shown.glossary, change.from);
    const to = valueText(t, shown.kind, shown.glossary, change.to) ?? '—';
    lines.push(from === null ? t.t('history.changeNew', { field, to }) : t.t('history.change', { field, from, to }));
  }
  const images = version.changed.images;
  if (images && Array.isArray(images.to)) lines.push(t.t('history.photosReplaced', { count: images.to.length }));
  const listing = version.changed[LISTING_FIELD];
  if (listing) lines.push(t.t(listing.to === 'left' ? 'history.listingLeft' : 'history.listingBack'));
  return lines;
}

/** The page's view of a lot's history as of the report's time (history-service.ts, historiesForReport). */
export function buildHistory(history: LotHistory, t: Translator): HistoryView {
  const sources = [...new Set(history.versions.map((version) => version.source))];
  const entries: HistoryEntryView[] = history.versions.map((version, index) => ({
    date: t.formatDate(version.observed_at) ?? version.observed_at,
    datetime: isoInstant(version.observed_at),
    source: version.source,
    first: index === 0,
    changes: index === 0 ? [] : changesOf(version, t),
  }));
  return {
    title: t.t('history.title'),
    provenance: t.t('history.provenance', {
      sources: sources.join(', '),
      first: t.formatDate(history.first_seen_at) ?? history.first_seen_at,
      last: t.formatDate(history.last_seen_at) ?? history.last_seen_at,
    }),
    // A later version that changed only fields the page does not list still shows, with its date and source.
    entries,
    unchanged: history.versions.length === 1 ? t.t('history.unchanged') : null,
  };
}
