import java.util.ArrayList;
import java.util.List;

class Fizz {
    static String say(int n) {
        if (n % 15 == 0) {
            return "FizzBuzz";
        }
        if (n % 3 == 0) {
            return "Fizz";
        }
        if (n % 5 == 0) {
            return "Buzz";
        }
        return Integer.toString(n);
    }

    static List<String> upTo(int limit) {
        List<String> out = new ArrayList<>();
        for (int i = 1; i <= limit; i++) {
            out.add(say(i));
        }
        return out;
    }

    public static void main(String[] args) {
        int limit = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        System.out.println(String.join(" ", upTo(limit)));
    }
}
