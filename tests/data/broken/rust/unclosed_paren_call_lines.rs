use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Level {
    Info,
    Warn,
    Error,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        };
        write!(f, "{:<5}", name)
    }
}

fn log(level: Level, module: &str, message: &str) {
    eprintln!(
        "[{}] {}: {}",
        level,
        module,
        message
    ;
}

fn main() {
    log(Level::Info, "startup", "reading configuration");
    log(Level::Warn, "config", "no cache directory set, using /tmp");
    if std::env::args().count() > 3 {
        log(Level::Error, "cli", "too many arguments");
    }
}
