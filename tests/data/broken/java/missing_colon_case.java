class HttpStatus {
    static String reason(int code) {
        switch (code) {
            case 200:
                return "OK";
            case 201:
                return "Created";
            case 301
                return "Moved Permanently";
            case 404:
                return "Not Found";
            case 500:
                return "Internal Server Error";
            default:
                return "Unknown";
        }
    }

    static boolean isError(int code) {
        return code >= 400;
    }

    public static void main(String[] args) {
        for (String arg : args) {
            int code = Integer.parseInt(arg);
            String kind = isError(code) ? "error" : "ok";
            System.out.println(code + " " + reason(code) + " (" + kind + ")");
        }
    }
}
