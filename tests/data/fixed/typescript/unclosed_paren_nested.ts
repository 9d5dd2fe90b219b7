export interface Invoice {
  id: string;
  customer: string;
  lines: { description: string; cents: number }[];
  paidAt?: Date;
}

const currency = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

export function invoiceTotal(invoice: Invoice): number {
  return invoice.lines.reduce((sum, line) => sum + line.cents, 0);
}

export function outstanding(invoices: Invoice[]): Invoice[] {
  return invoices.filter((invoice) => !invoice.paidAt);
}

export function summary(invoices: Invoice[]): string[] {
  return outstanding(invoices).map(
    (invoice) => `${invoice.id} ${invoice.customer}: ${currency.format(invoiceTotal(invoice) / 100)}`,
  );
}

const invoices: Invoice[] = [
  { id: "INV-1", customer: "Acme", lines: [{ description: "Support", cents: 12000 }] },
  { id: "INV-2", customer: "Globex", lines: [], paidAt: new Date() },
];
for (const line of summary(invoices)) {
  console.log(line);
}
