import java.util.HashMap;
import java.util.Map;

class Router {
    interface Handler {
        String handle(String path);
    }

    private final Map<String, Handler> routes = new HashMap<>();

    void get(String prefix, Handler handler) {
        routes.put(prefix, handler);
    }

    String dispatch(String path) {
        for (Map.Entry<String, Handler> route : routes.entrySet()) {
            if (path.startsWith(route.getKey())) {
                return route.getValue().handle(path);
            }
        }
        return "404 Not Found";
    }

    public static void main(String[] args) {
        Router router = new Router();
        router.get("/hello", path -> "Hello!");
        router.get("/users/", path -> "user " + path.substring(7));
        System.out.println(router.dispatch("/users/42"));
    }
}
