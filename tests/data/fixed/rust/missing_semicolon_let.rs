use std::collections::HashMap;
use std::env;
use std::fs;

fn count_words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        let word = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if !word.is_empty() {
            *counts.entry(word).or_insert(0) += 1;
        }
    }
    counts
}

fn main() {
    let path = env::args().nth(1).unwrap_or_else(|| "README.md".to_string());
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("{}: {}", path, err);
            std::process::exit(1);
        }
    };
    let counts = count_words(&text);
    let mut pairs: Vec<_> = counts.into_iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (word, count) in pairs.iter().take(10) {
        println!("{:>6} {}", count, word);
    }
}
