use std::env;
use std::path::PathBuf;

fn config_dir() -> PathBuf {
    if let Ok(dir) = env::var("XDG_CONFIG_HOME") {
        return PathBuf::from(dir);
    }
    let home = env::var("HOME").unwrap_or_else(|_| String::from("."));
    PathBuf::from(home).join(".config")
}

fn config_file(app: &str) -> PathBuf {
    let mut path = config_dir().join(app);
    path.push("config.toml");
    path
}

fn main() {
    let app = env::args().nth(1).unwrap_or_else(|| "demo".to_string());
    let path = config_file(&app);
    let exists = path.exists());
    println!("{} ({})", path.display(), if exists { "found" } else { "missing" });
}
