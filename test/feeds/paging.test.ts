import { describe, expect, it } from 'vitest';
import { linkNext, nextPage, recordsOf } from '../../src/feeds/paging.ts';

const PAGE = 'https://api.vendor.example/v2/vehicles?per_page=2';
const urls = { paged: true, cursorParam: null, updatedSinceParam: null };
const cursors = { paged: true, cursorParam: 'cursor', updatedSinceParam: null };

describe('the pages of a vendor API', () => {
  it('finds the records: the body as an array, or the first array under the usual fields', () => {
    expect(recordsOf([{ a: 1 }])).toEqual([{ a: 1 }]);
    expect(recordsOf({ meta: {}, items: [{ a: 2 }] })).toEqual([{ a: 2 }]);
    expect(recordsOf({ vehicles: [] })).toEqual([]);
    expect(recordsOf({ data: { rows: [] } })).toBeNull();
    expect(recordsOf('text')).toBeNull();
  });

  it('follows a Link header\'s rel="next" first, resolved against the page', () => {
    expect(linkNext('<https://a.example/p2>; rel="next", <https://a.example/p9>; rel="last"', PAGE)).toBe('https://a.example/p2');
    expect(linkNext('</v2/vehicles?page=3>; rel="prev next"', PAGE)).toBe('https://api.vendor.example/v2/vehicles?page=3');
    expect(linkNext('<https://a.example/p1>; rel="prev"', PAGE)).toBeNull();
    expect(nextPage({ next: 'https://ignored.example' }, '<https://a.example/p2>; rel="next"', PAGE, urls)).toBe('https://a.example/p2');
  });

  it('takes a URL from the body, and a cursor as the query parameter the operator named', () => {
    expect(nextPage({ links: { next: '/v2/vehicles?page=2' } }, undefined, PAGE, urls)).toBe('https://api.vendor.example/v2/vehicles?page=2');
    expect(nextPage({ next_page_url: null }, undefined, PAGE, urls)).toBeNull();
    expect(nextPage({ meta: { next_cursor: 'abc' } }, undefined, PAGE, cursors)).toBe('https://api.vendor.example/v2/vehicles?per_page=2&cursor=abc');
    expect(nextPage({ next: 'opaque-token' }, undefined, PAGE, cursors)).toBe('https://api.vendor.example/v2/vehicles?per_page=2&cursor=opaque-token');
    // A bare token without a cursor parameter to send it as is no next page.
    expect(nextPage({ next_cursor: 'abc' }, undefined, PAGE, urls)).toBeNull();
  });
});
