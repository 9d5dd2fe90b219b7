use std::io::{self, BufRead};

fn is_palindrome(word: &str) -> bool {
    let letters: Vec<char> = word
        .chars()
        .filter(|c| c.is_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    letters.iter().eq(letters.iter().rev())
}

fn main() {
    let stdin = io::stdin();
    let mut checked = 0
    let mut found = Vec::new();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin is readable");
        checked += 1;
        if is_palindrome(&line && !line.trim().is_empty() {
            found.push(line);
        }
    }
    println!("{} of {} lines are palindromes", found.len(), checked);
    for word in &found {
        println!("  {}", word.trim());
    }
}
