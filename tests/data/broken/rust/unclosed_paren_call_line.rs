fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

fn variance(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    let squares: Vec<f64> = values.iter().map(|v| (v - m).powi(2)).collect();
    mean(&squares)
}

fn parse_numbers(text: &str) -> Vec<f64> {
    text.split_whitespace().filter_map(|word| word.parse().ok()).collect()
}

fn main() {
    let input = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let values = parse_numbers(&input);
    match (mean(&values), variance(&values)) {
        (Some(m), Some(v)) => {
            let deviation = v.sqrt(;
            println!("n={} mean={:.3} sd={:.3}", values.len(), m, deviation);
        }
        _ => eprintln!("no numbers given"),
    }
}
