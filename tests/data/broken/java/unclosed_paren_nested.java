import java.util.ArrayList;
import java.util.List;

class Temperatures {
    private final List<Double> readings = new ArrayList<>();

    void record(double celsius) {
        readings.add(celsius);
    }

    double average() {
        double sum = 0;
        for (double reading : readings) {
            sum += reading;
        }
        return readings.isEmpty() ? 0 : sum / readings.size();
    }

    double max() {
        double best = Double.NEGATIVE_INFINITY;
        for (double reading : readings) {
            best = Math.max(best, reading);
        }
        return best;
    }

    public static void main(String[] args) {
        Temperatures week = new Temperatures();
        for (String arg : args) {
            week.record(Double.parseDouble(arg.trim());
        }
        System.out.printf("avg %.1f, max %.1f%n", week.average(), week.max());
    }
}
