#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char **argv) {
    if (argc != 2) {
        std::cerr << "usage: head FILE\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::cerr << "cannot open " << argv[1] << '\n';
        return 1;
    }
    std::string line;
    int shown = 0;
    while (shown < 10 && std::getline(in, line)) {
        std::cout << line << '\n';
        ++shown;
    }
    if (shown == 0) {
        std::cout << "(empty file)\n";
    }
    return 0;
}
