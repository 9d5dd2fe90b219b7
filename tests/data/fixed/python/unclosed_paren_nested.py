"""Parse "name,quantity,price" lines into order items and total them."""

import sys
from dataclasses import dataclass
from decimal import Decimal


@dataclass
class Item:
    name: str
    quantity: int
    price: Decimal

    @property
    def total(self):
        return self.price * self.quantity


def parse_items(lines):
    items = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, quantity, price = line.split(",")
        items.append(Item(name.strip(), int(quantity), Decimal(price)))
    return items


def main():
    items = parse_items(sys.stdin)
    for item in items:
        print(f"{item.name:<20} {item.quantity:>4} x {item.price:>8} = {item.total:>10}")
    print(f"{'total':<20} {sum(item.total for item in items):>28}")


if __name__ == "__main__":
    main()
