import java.util.Locale;

class Units {
    private static final String[] SUFFIXES = {
        "B",
        "KiB"
        "MiB",
        "GiB",
        "TiB",
    };

    private static final long[] SAMPLES = {
        512L,
        20_480L,
        5_242_880L,
        3_221_225_472L,
    };

    static String human(long bytes) {
        double value = bytes;
        int unit = 0;
        while (value >= 1024 && unit < SUFFIXES.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f %s", value, SUFFIXES[unit]);
    }

    public static void main(String[] args) {
        for (long sample : SAMPLES) {
            System.out.println(sample + " -> " + human(sample));
        }
    }
}
