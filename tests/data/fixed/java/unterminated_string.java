import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

class LineCounter {
    static final String USAGE = "usage: LineCounter FILE...";

    static long countLines(Path path) {
        try {
            List<String> lines = Files.readAllLines(path);
            return lines.stream().filter(line -> !line.isBlank()).count();
        } catch (Exception e) {
            System.err.println("cannot read " + path + ": " + e.getMessage());
            return 0;
        }
    }

    public static void main(String[] args) {
        if (args.length == 0) {
            System.err.println(USAGE);
            System.exit(2);
        }
        long total = 0;
        for (String arg : args) {
            long lines = countLines(Path.of(arg));
            System.out.printf("%8d %s%n", lines, arg);
            total += lines;
        }
        System.out.printf("%8d total%n", total);
    }
}
