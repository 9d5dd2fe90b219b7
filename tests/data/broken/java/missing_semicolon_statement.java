import java.util.ArrayList;
import java.util.List;

class Inventory {
    private final List<String> names = new ArrayList<>();
    private final List<Integer> counts = new ArrayList<>();

    void add(String name, int count) {
        int index = names.indexOf(name)
        if (index >= 0) {
            counts.set(index, counts.get(index) + count);
        } else {
            names.add(name);
            counts.add(count);
        }
    }

    int total() {
        int sum = 0;
        for (int count : counts) {
            sum += count;
        }
        return sum;
    }

    public static void main(String[] args) {
        Inventory inventory = new Inventory();
        inventory.add("bolts", 40);
        inventory.add("nuts", 25);
        inventory.add("bolts", 10);
        System.out.println("items: " + inventory.total());
    }
}
