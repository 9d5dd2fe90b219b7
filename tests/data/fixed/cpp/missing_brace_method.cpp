#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

struct Logger {
    explicit Logger(const std::string &path) : out(path, std::ios::app), lines(0) {
        if (!out) throw std::runtime_error("cannot open " + path);
    }

    void write(const std::string &level, const std::string &message) {
        out << '[' << level << "] " << message << '\n';
        ++lines;
    }

    void info(const std::string &message) { write("INFO", message); }
    void error(const std::string &message) { write("ERROR", message); }

    std::ofstream out;
    int lines;
};

int main(int argc, char **argv) {
    try {
        Logger log(argc > 1 ? argv[1] : "app.log");
        log.info("started");
        log.error("disk almost full");
        std::cout << log.lines << " lines written\n";
    } catch (const std::exception &e) {
        std::cerr << e.what() << '\n';
        return 1;
    }
    return 0;
}
