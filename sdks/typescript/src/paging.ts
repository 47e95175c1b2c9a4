/**
 * Every item of a cursor-paged list: asks for a page, yields its items, and asks for the next
 * with the page's `next_cursor` until it is null.
 */
export async function* paginate<Page extends { next_cursor: string | null }, Item>(
  fetchPage: (cursor: string | undefined) => Promise<Page>,
  itemsOf: (page: Page) => Item[],
): AsyncGenerator<Item> {
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* itemsOf(page);
    if (page.next_cursor === null || page.next_cursor === '') return;
    cursor = page.next_cursor;
  }
}
