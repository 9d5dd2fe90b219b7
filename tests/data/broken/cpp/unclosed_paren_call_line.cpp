#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

std::vector<std::string> split(const std::string &text, char separator) {
    std::vector<std::string> parts;
    std::string current;
    for (char c : text) {
        if (c == separator) {
            parts.push_back(current);
            current.clear();
        } else {
            current.push_back(c);
        }
    }
    parts.push_back(current);
    return parts;
}

int main() {
    std::string line;
    std::size_t widest = 0;
    while (std::getline(std::cin, line)) {
        for (const std::string &field : split(line, ',')) {
            widest = std::max(widest, field.size();
        }
    }
    std::cout << "widest field: " << widest << " characters\n";
    return 0;
}
