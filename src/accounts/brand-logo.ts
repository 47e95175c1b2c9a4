import { createHash } from 'node:crypto';
import { BRAND_LIMITS } from '../domain/brand.ts';
import type { LogoProcess } from '../media/logo-process.ts';

export type LogoOutcome = { kind: 'ok'; png: Buffer; hash: string } | { kind: 'invalid'; message: string };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const WHITESPACE = /\s/;

/**
 * Whether the file starts as an SVG does: an optional BOM and XML declaration, then any comments
 * and doctypes, then `<svg`. A scanner that moves forward only, so its time is linear in the 4 KiB
 * it reads: the regex it replaces backtracked over repeated comments, doubling its time with each
 * (issue 28, F1: 281 bytes held the event loop for good).
 */
function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 4096).toString('utf8');
  let at = head.startsWith('\uFEFF') ? 1 : 0;
  const skipSpace = () => {
    while (at < head.length && WHITESPACE.test(head[at]!)) at++;
  };
  const startsHere = (word: string) => head.slice(at, at + word.length).toLowerCase() === word;
  /** Moves past the next `end` after `from`; false when there is none. */
  const skipPast = (end: string, from: number) => {
    const found = head.indexOf(end, from);
    if (found < 0) return false;
    at = found + end.length;
    return true;
  };
  skipSpace();
  if (startsHere('<?xml')) {
    if (!skipPast('>', at)) return false;
    skipSpace();
  }
  for (;;) {
    if (startsHere('<!--')) {
      if (!skipPast('-->', at + 4)) return false;
    } else if (startsHere('<!doctype')) {
      if (!skipPast('>', at)) return false;
    } else {
      break;
    }
    skipSpace();
  }
  return startsHere('<svg') && (head[at + 4] === '>' || WHITESPACE.test(head[at + 4] ?? ''));
}

/**
 * How much structure an SVG logo may have, checked before anything draws it (issue 28, F2). A real
 * logo is a few dozen to a few hundred elements, rarely nested ten deep, and seldom uses `<use>` or
 * a filter; an SVG bomb multiplies work by nesting `<use>` (ten of ten of ten: a thousand blurs
 * from 805 bytes). With at most 8 `<use>` the most one drawing can be multiplied is 18 (3×3×2).
 * What passes still draws under the child's CPU, memory and time caps (media/logo-process.ts).
 */
export const SVG_LOGO_LIMITS = Object.freeze({ elements: 1000, depth: 32, uses: 8, filterPrimitives: 8 });

/**
 * Why an SVG's structure is refused, or null: elements, nesting, `<use>` and filter primitives
 * (`fe*`) counted in one forward pass over the text (linear, no regex).
 */
export function svgShapeProblem(text: string): string | null {
  const limits = SVG_LOGO_LIMITS;
  const unreadable = 'The logo could not be read as an SVG image.';
  let elements = 0;
  let depth = 0;
  let uses = 0;
  let filterPrimitives = 0;
  let at = 0;
  for (;;) {
    const open = text.indexOf('<', at);
    if (open < 0) return null;
    const skipTo = (end: string, from: number): boolean => {
      const found = text.indexOf(end, from);
      if (found < 0) return false;
      at = found + end.length;
      return true;
    };
    if (text.startsWith('<!--', open)) {
      if (!skipTo('-->', open + 4)) return unreadable;
      continue;
    }
    if (text.startsWith('<![CDATA[', open)) {
      if (!skipTo(']]>', open + 9)) return unreadable;
      continue;
    }
    if (text.startsWith('<?', open)) {
      if (!skipTo('?>', open + 2)) return unreadable;
      continue;
    }
    if (text.startsWith('<!', open)) {
      // A doctype; one declaring entities (billion laughs) never gets here: its first '>' ends
      // inside the declarations, and the sniff then finds no <svg after it.
      if (!skipTo('>', open)) return unreadable;
      continue;
    }
    // A tag ends at the first '>' outside a quoted attribute value.
    let end = open + 1;
    let quote: string | null = null;
    for (; end < text.length; end++) {
      const char = text[end]!;
      if (quote !== null) {
        if (char === quote) quote = null;
      } else if (char === '"' || char === "'") {
        quote = char;
      } else if (char === '>') {
        break;
      }
    }
    if (end >= text.length) return unreadable;
    at = end + 1;
    if (text[open + 1] === '/') {
      depth--;
      continue;
    }
    let nameEnd = open + 1;
    while (nameEnd < end && !WHITESPACE.test(text[nameEnd]!) && text[nameEnd] !== '/') nameEnd++;
    const name = text.slice(open + 1, nameEnd);
    const local = name.slice(name.indexOf(':') + 1);
    elements++;
    if (local === 'use') uses++;
    if (local.startsWith('fe')) filterPrimitives++;
    if (text[end - 1] !== '/') depth++;
    if (elements > limits.elements) return `The logo has more than ${limits.elements} elements; simplify it, or save it as a PNG.`;
    if (depth > limits.depth) return `The logo nests elements more than ${limits.depth} deep; simplify it, or save it as a PNG.`;
    if (uses > limits.uses) return `The logo has more than ${limits.uses} <use> elements; simplify it, or save it as a PNG.`;
    if (filterPrimitives > limits.filterPrimitives) return `The logo has more than ${limits.filterPrimitives} filter effects; simplify it, or save it as a PNG.`;
  }
}

/**
 * An uploaded logo (PNG or SVG) made into the PNG the reports show. What can be checked cheaply is
 * checked here (the file's size, its format, an SVG's structure); the decoding and drawing happen
 * in a child process under hard caps (media/logo-process.ts, media/logo-render.ts), never on the
 * server's event loop or its libuv pool, which log-ins and reads need.
 */
export async function prepareLogo(bytes: Buffer, logos: LogoProcess): Promise<LogoOutcome> {
  if (bytes.length === 0) return { kind: 'invalid', message: 'The logo file is empty.' };
  if (bytes.length > BRAND_LIMITS.logoBytes) {
    return { kind: 'invalid', message: `The logo is ${Math.ceil(bytes.length / 1024)} KiB; it may be at most ${BRAND_LIMITS.logoBytes / 1024} KiB.` };
  }
  const isPng = bytes.subarray(0, 8).equals(PNG_SIGNATURE);
  const isSvg = !isPng && looksLikeSvg(bytes);
  if (!isPng && !isSvg) return { kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' };
  if (isSvg) {
    const problem = svgShapeProblem(bytes.toString('utf8'));
    if (problem !== null) return { kind: 'invalid', message: problem };
  }
  const drawn = await logos.render(bytes, isPng ? 'png' : 'svg');
  if (drawn.kind === 'invalid') return drawn;
  const png = Buffer.from(drawn.png.buffer, drawn.png.byteOffset, drawn.png.byteLength);
  if (png.length > BRAND_LIMITS.logoBytes) {
    return { kind: 'invalid', message: `The logo makes a PNG of ${Math.ceil(png.length / 1024)} KiB; simplify it to under ${BRAND_LIMITS.logoBytes / 1024} KiB.` };
  }
  return { kind: 'ok', png, hash: createHash('sha256').update(png).digest('hex') };
}
