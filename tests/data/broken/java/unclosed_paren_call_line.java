import java.util.HashMap;
import java.util.Map;

class WordCount {
    static Map<String, Integer> count(String text) {
        Map<String, Integer> counts = new HashMap<>();
        for (String word : text.toLowerCase().split("\\W+")) {
            if (word.isEmpty()) {
                continue;
            }
            counts.merge(word, 1, Integer::sum;
        }
        return counts;
    }

    static String mostCommon(Map<String, Integer> counts) {
        String best = null;
        int bestCount = 0;
        for (Map.Entry<String, Integer> entry : counts.entrySet()) {
            if (entry.getValue() > bestCount) {
                best = entry.getKey();
                bestCount = entry.getValue();
            }
        }
        return best;
    }

    public static void main(String[] args) {
        String text = String.join(" ", args);
        Map<String, Integer> counts = count(text);
        System.out.println(counts.size() + " distinct words");
        System.out.println("most common: " + mostCommon(counts));
    }
}
