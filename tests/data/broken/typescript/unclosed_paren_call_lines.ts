export interface Item {
  id?: number;
  name: string;
  priceCents: number;
}

export class ItemClient {
  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  private headers(): Record<string, string> {
    return { "Content-Type": "application/json", Authorization: `Bearer ${this.token}` };
  }

  async create(item: Item): Promise<Item> {
    const response = await fetch(`${this.base}/items`, {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify(item),
    };
    if (!response.ok) {
      throw new Error(`create failed: ${response.status}`);
    }
    return (await response.json()) as Item;
  }

  async remove(id: number): Promise<boolean> {
    const response = await fetch(`${this.base}/items/${id}`, {
      method: "DELETE",
      headers: this.headers(),
    });
    return response.ok;
  }
}
