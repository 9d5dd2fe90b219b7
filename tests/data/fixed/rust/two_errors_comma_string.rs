#[derive(Debug, PartialEq)]
enum Token {
    Number(f64),
    Plus,
    Minus,
    Star,
    Slash,
}

fn tokenize(input: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    for word in input.split_whitespace() {
        let token = match word {
            "+" => Token::Plus,
            "-" => Token::Minus,
            "*" => Token::Star,
            "/" => Token::Slash,
            other => match other.parse() {
                Ok(n) => Token::Number(n),
                Err(_) => return Err(format!("unexpected {:?}", other)),
            },
        };
        tokens.push(token);
    }
    Ok(tokens)
}

fn main() {
    match tokenize("3 + 4 * x") {
        Ok(tokens) => println!("{:?}", tokens),
        Err(message) => eprintln!("error: {}", message),
    }
}
