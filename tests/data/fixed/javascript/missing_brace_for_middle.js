"use strict";

class OrderBook {
  constructor(orders = []) {
    this.orders = orders;
  }

  add(customer, amount) {
    this.orders.push({ customer, amount });
    return this;
  }

  totals() {
    const totals = new Map();
    for (const order of this.orders) {
      const previous = totals.get(order.customer) || 0;
      totals.set(order.customer, previous + order.amount);
    }
    return totals;
  }

  print() {
    for (const [customer, total] of this.totals()) {
      console.log(`${customer.padEnd(10)} ${total.toFixed(2).padStart(10)}`);
    }
  }

  clear() {
    this.orders = [];
  }
}

const book = new OrderBook().add("acme", 120.5).add("globex", 80).add("acme", 42.25);
book.print();
