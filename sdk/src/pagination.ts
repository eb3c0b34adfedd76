/** A page of a list endpoint: newest first; `hasMore` when another page follows. */
export interface Page<Item> {
  object: 'list';
  data: Item[];
  hasMore: boolean;
}

/**
 * What a list method returns: a promise of the first page that is also an async iterable of every item of every
 * page (`for await (const user of client.listUsers())`), fetched page by page with `startingAfter` as it goes.
 */
export type PagePromise<P extends Page<unknown>> = Promise<P> &
  AsyncIterable<P['data'][number]> & {
    /** Every item of every page, up to `max` items (default 10000), in order. */
    toArray(max?: number): Promise<Array<P['data'][number]>>;
  };

/**
 * Wraps `fetchPage` (which gets the `startingAfter` cursor, undefined for the first page) into a PagePromise. The
 * first page is requested at once; further pages only while the caller keeps iterating. `cursorField` is the id
 * field of the items (`id`, or e.g. `documentId`): the last item's value is the next page's cursor.
 */
export function pagePromise<P extends Page<unknown>>(
  cursorField: string,
  fetchPage: (startingAfter: string | undefined) => Promise<P>,
): PagePromise<P> {
  const cursorOf = (item: unknown): string => {
    const id = (item as Record<string, unknown>)[cursorField];
    if (typeof id !== 'string') throw new Error(`A listed item has no ${cursorField} to page with`);
    return id;
  };
  const first = fetchPage(undefined);
  async function* items(): AsyncGenerator<P['data'][number]> {
    let page: P = await first;
    for (;;) {
      for (const item of page.data as Array<P['data'][number]>) yield item;
      if (!page.hasMore || !page.data.length) return;
      page = await fetchPage(cursorOf(page.data[page.data.length - 1]));
    }
  }
  return Object.assign(first, {
    [Symbol.asyncIterator]: items,
    async toArray(max = 10_000) {
      const out: Array<P['data'][number]> = [];
      for await (const item of items()) {
        if (out.length >= max) break;
        out.push(item);
      }
      return out;
    },
  });
}
