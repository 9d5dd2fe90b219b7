import java.util.Optional;

class Config {
    private final String host;
    private final int port;

    Config(String host, int port) {
        this.host = host;
        this.port = port;
    }

    static Config fromEnv() {
        String host = Optional.ofNullable(System.getenv("APP_HOST")).orElse("localhost");
        int port = 8080;
        String rawPort = System.getenv("APP_PORT");
        if (rawPort != null) {
            port = Integer.parseInt(rawPort.trim());
        }
        return new Config(host, port);
    }

    String url() {
        return "http://" + host + ":" + port;
    }

    public static void main(String[] args) {
        System.out.println(fromEnv().url());
    }
}
