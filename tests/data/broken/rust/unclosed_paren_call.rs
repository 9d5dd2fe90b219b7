#[derive(Debug, Clone, PartialEq)]
pub struct LineItem {
    pub name: String,
    pub unit_price: f64,
    pub quantity: u32,
}

pub fn subtotal(items: &[LineItem]) -> f64 {
    items
        .iter()
        .map(|item| item.unit_price * f64::from(item.quantity))
        .sum()
}

pub fn apply_discount(amount: f64, percent: f64) -> f64 {
    let percent = percent.clamp(0.0, 100.0);
    amount * (1.0 - percent / 100.0)
}

pub fn total_with_tax(items: &[LineItem], discount: f64, tax_rate: f64) -> f64 {
    let net = apply_discount(subtotal(items, discount);
    let total = net * (1.0 + tax_rate);
    (total * 100.0).round() / 100.0
}

fn main() {
    let items = vec![
        LineItem { name: "coffee".into(), unit_price: 3.5, quantity: 2 },
        LineItem { name: "bagel".into(), unit_price: 2.25, quantity: 1 },
    ];
    println!("total: {:.2}", total_with_tax(&items, 10.0, 0.08));
}
