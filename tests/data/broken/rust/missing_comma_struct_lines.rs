use std::time::Duration;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub host: String,
    pub port: u16,
    pub workers: usize,
    pub read_timeout: Duration,
    pub verbose: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            host: String::from("127.0.0.1"),
            port: 8080
            workers: 4,
            read_timeout: Duration::from_secs(30),
            verbose: false,
        }
    }
}

impl ServerConfig {
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

fn main() {
    let config = ServerConfig {
        port: 9000,
        ..ServerConfig::default()
    };
    println!("listening on {} with {} workers", config.address(), config.workers);
}
