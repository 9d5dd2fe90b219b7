import java.util.ArrayDeque;
import java.util.Deque;

class UndoStack {
    private final Deque<String> undo = new ArrayDeque<>();
    private final Deque<String> redo = new ArrayDeque<>();
    private String current = "";

    void edit(String text) {
        undo.push(current);
        redo.clear();
        current = text;
    }

    boolean undo() {
        if (undo.isEmpty()) {
            return false;
        }
        redo.push(current);
        current = undo.pop();
        return true;
    }

    boolean redo() {
        if (redo.isEmpty()) {
            return false;
        }
        undo.push(current);
        current = redo.pop();
        return true;
    }

    String current() {
        return current;
    }

    public static void main(String[] args) {
        UndoStack stack = new UndoStack();
        stack.edit("hello");
        stack.edit("hello world");
        stack.undo();
        System.out.println(stack.current());
    }
}
