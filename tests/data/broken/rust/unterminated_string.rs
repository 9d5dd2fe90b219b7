use std::fmt;

#[derive(Debug)]
enum Command {
    Add(String),
    Done(usize),
    List,
}

#[derive(Debug)]
struct ParseError(String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot parse command: {}", self.0)
    }
}

fn parse(line: &str) -> Result<Command, ParseError> {
    let mut parts = line.trim().splitn(2, ' ');
    match (parts.next(), parts.next()) {
        (Some("add"), Some(text)) => Ok(Command::Add(text.to_string())),
        (Some("done"), Some(n)) => n
            .parse()
            .map(Command::Done)
            .map_err(|_| ParseError(format!("not a number: {}", n))),
        (Some("list"), None) => Ok(Command::List),
        _ => Err(ParseError(line.to_string())),
    }
}

fn main() {
    for line in ["add buy milk", "done 1", "list", "remove 2"] {
        match parse(line) {
            Ok(cmd) => println!("{:?}", cmd),
            Err(err) => eprintln!("error: {}, err),
        }
    }
}
