from dataclasses import dataclass, field


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0
    unit_price: float = 0.0

    @property
    def value(self) -> float:
        return self.quantity * self.unit_price


@dataclass
class Inventory:
    items: list[Item] = field(default_factory=list)

    def add(self, item: Item) -> None:
        self.items.append(item)

    def low_stock(self, threshold: int = 5) -> list[Item]:
        low = []
        for item in self.items:
            if item.quantity < threshold:
                low.append(item)
        return low

    def total_value(self) -> float:
        return sum(item.value for item in self.items)


if __name__ == "__main__":
    stock = Inventory()
    stock.add(Item("A-1", "bolts", 120, 0.05))
    stock.add(Item("B-7", "hinges", 3, 2.40))
    print([item.name for item in stock.low_stock()])
    print(round(stock.total_value(), 2))
