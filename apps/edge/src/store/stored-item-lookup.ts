import type { InputItem } from '@fastloop/protocol';
import type { ItemLookup } from '../turn/turn-deps';
import type { ResponseStore } from './response-store';
import type { StoreWriter } from './store-writer';

/**
 * Resolves `item_reference` ids from the response store, within the caller's tenant. A miss waits
 * for the writes in flight and looks again, so a client that references an item of the response
 * it just received finds it although that response is stored after its terminal event.
 */
export class StoredItemLookup implements ItemLookup {
  constructor(
    private readonly store: ResponseStore,
    private readonly writer: StoreWriter,
  ) {}

  async find(id: string, tenant: string): Promise<InputItem | undefined> {
    const found = await this.store.findItem(id, tenant);
    if (found) return found;
    await this.writer.settled();
    return this.store.findItem(id, tenant);
  }
}
