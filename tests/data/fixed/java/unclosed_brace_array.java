import java.util.StringJoiner;

class CsvHeader {
    private static final String[] COLUMNS = {
        "id",
        "name",
        "email",
        "signup_date",
    };

    static String quote(String field) {
        if (field.contains(",") || field.contains("\"")) {
            return "\"" + field.replace("\"", "\"\"") + "\"";
        }
        return field;
    }

    static String row(String... fields) {
        StringJoiner joiner = new StringJoiner(",");
        for (String field : fields) {
            joiner.add(quote(field));
        }
        return joiner.toString();
    }

    public static void main(String[] args) {
        System.out.println(row(COLUMNS));
        System.out.println(row("1", "Ana, Jr.", "ana@example.com", "2024-05-01"));
    }
}
