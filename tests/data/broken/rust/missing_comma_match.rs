use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

impl FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "trace" => Ok(Level::Trace),
            "debug" => Ok(Level::Debug)
            "info" => Ok(Level::Info),
            "warn" | "warning" => Ok(Level::Warn),
            "error" => Ok(Level::Error),
            other => Err(format!("unknown log level: {}", other)),
        }
    }
}

fn main() {
    let wanted: Level = std::env::var("LOG_LEVEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(Level::Info);
    println!("log level: {:?}", wanted);
}
