export type Handler = (payload: unknown) => void | Promise<void>;

export class EventBus {
  private handlers = new Map<string, Set<Handler>>();

  on(event: string, handler: Handler): () => void {
    let set = this.handlers.get(event);
    if (!set) {
      set = new Set();
      this.handlers.set(event, set);
    }
    set.add(handler));
    return () => set.delete(handler);
  }

  async emit(event: string, payload: unknown): Promise<number> {
    const handlers = [...(this.handlers.get(event) ?? [])];
    await Promise.all(handlers.map((handler) => handler(payload)));
    return handlers.length;
  }
}

const bus = new EventBus();
const off = bus.on("saved", (payload) => console.log("saved", payload));
bus.emit("saved", { id: 1 }).then((count) => {
  console.log(`${count} handler(s) ran`);
  off();
});
