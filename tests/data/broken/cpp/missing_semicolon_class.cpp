#include <iostream>
#include <string>
#include <vector>

class Task {
public:
    Task(std::string title, int priority) : title_(std::move(title)), priority_(priority) {}

    const std::string &title() const { return title_; }
    int priority() const { return priority_; }
    bool done() const { return done_; }
    void finish() { done_ = true; }

private:
    std::string title_;
    int priority_;
    bool done_ = false;
}

int main() {
    std::vector<Task> tasks{{"write report", 2}, {"fix build", 1}, {"review PR", 3}};
    tasks[1].finish();
    for (const Task &task : tasks) {
        std::cout << (task.done() ? "[x] " : "[ ] ") << task.priority() << ' ' << task.title()
                  << '\n';
    }
    return 0;
}
