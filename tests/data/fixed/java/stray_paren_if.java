import java.util.ArrayList;
import java.util.List;

class Playlist {
    private final String name;
    private final List<String> tracks = new ArrayList<>();

    Playlist(String name) {
        this.name = name;
    }

    void add(String track) {
        if (!tracks.contains(track)) {
            tracks.add(track);
        }
    }

    void shuffle(long seed) {
        java.util.Collections.shuffle(tracks, new java.util.Random(seed));
    }

    String describe() {
        return name + " (" + tracks.size() + " tracks): " + String.join(", ", tracks);
    }

    public static void main(String[] args) {
        Playlist list = new Playlist("focus");
        list.add("Intro");
        list.add("Rain");
        list.shuffle(42);
        System.out.println(list.describe());
    }
}
