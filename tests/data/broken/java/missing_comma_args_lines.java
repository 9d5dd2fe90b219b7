import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

class Library {
    record Book(String title, String author, int year, LocalDate borrowedOn) {}

    private final List<Book> books = new ArrayList<>();

    void add(String title, String author, int year) {
        books.add(new Book(title, author, year, null));
    }

    Book borrow(String title) {
        for (int i = 0; i < books.size(); i++) {
            Book book = books.get(i);
            if (book.title().equals(title) && book.borrowedOn() == null) {
                Book borrowed = new Book(
                    book.title(),
                    book.author()
                    book.year(),
                    LocalDate.now()
                );
                books.set(i, borrowed);
                return borrowed;
            }
        }
        return null;
    }

    public static void main(String[] args) {
        Library library = new Library();
        library.add("Dune", "Frank Herbert", 1965);
        System.out.println(library.borrow("Dune"));
    }
}
