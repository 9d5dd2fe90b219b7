#include <iostream>
#include <optional>
#include <string>
#include <vector>

class Inventory {
public:
    void add(const std::string &name, int count) {
        for (auto &item : items_) {
            if (item.first == name) {
                item.second += count
                return;
            }
        }
        items_.emplace_back(name, count);
    }

    std::optional<int> count(const std::string &name) const {
        for (const auto &item : items_) {
            if (item.first == name) {
                return item.second;
            }
        }
        return std::nullopt;
    }

private:
    std::vector<std::pair<std::string, int>> items_;
};

int main() {
    Inventory inventory;
    inventory.add("bolts", 40);
    inventory.add("bolts", 10);
    std::cout << "bolts: " << inventory.count("bolts".value_or(0) << '\n';
    return 0;
}
